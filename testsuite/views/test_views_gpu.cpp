// GPU node check with hand-written hwloc XML topologies (testsuite/views/data/*.xml).

#include "views/gpu.hpp"
#include "views_fixture.hpp"
#include "../check_string.hpp"

using namespace idletime;
using namespace idletime::views;

namespace {

std::vector<GpuDevice> load(const char *file) {
    std::vector<GpuDevice> g;
    std::string err;
    ck_assert_msg(detect_gpus(srcpath(std::string("testsuite/views/data/") + file), g, err), "%s: %s", file,
                  err.c_str());
    return g;
}

bool has(const std::vector<NodeFinding> &f, const char *what) {
    for (const NodeFinding &x : f)
        if (x.what == what) return true;
    return false;
}

}  // namespace

START_TEST(test_detect) {
    struct {
        const char *file;
        size_t count;
        const char *spec0, *model0;
        unsigned dev0;
    } t[] = {
        {"a100-node.xml", 4, "a100", "NVIDIA A100-SXM4-80GB", 0x20b2},
        {"h100-node.xml", 4, "h100", "NVIDIA H100 80GB HBM3", 0x2330},
        {"mixed-node.xml", 4, "a100", "NVIDIA A100-SXM4-80GB", 0x20b2},
        {"a100-three.xml", 3, "a100", "NVIDIA A100-SXM4-80GB", 0x20b2},
        {"none-node.xml", 0, nullptr, nullptr, 0},
    };
    for (auto &c : t) {
        std::vector<GpuDevice> g = load(c.file);
        ck_assert_msg(g.size() == c.count, "%s: %zu GPUs", c.file, g.size());
        if (!c.count) continue;
        ck_assert_cxx_str_eq(g[0].spec, c.spec0);
        ck_assert_cxx_str_eq(g[0].model, c.model0);
        ck_assert_uint_eq(g[0].device_id, c.dev0);
        ck_assert_uint_eq(g[0].vendor_id, 0x10de);
        ck_assert_cxx_str_eq(g[0].busid, "0000:17:00.0");
    }
    ck_assert_cxx_str_eq(load("mixed-node.xml")[3].spec, "h100");
}
END_TEST

START_TEST(test_compare) {
    const Config &cfg = example_config();
    const Pool &east = *cfg.pool("a100-east"), &hmain = *cfg.pool("h100-main"), &cpu = *cfg.pool("cpu-gen");
    struct {
        const char *file;
        const Pool *pool;
        const char *gres;
        std::vector<const char *> want;  // findings expected (what)
    } t[] = {
        {"a100-node.xml", &east, "gpu:a100:4", {}},
        {"a100-node.xml", &east, "gpu:a100:4(S:0-1)", {}},
        {"h100-node.xml", &hmain, "gpu:h100:4", {}},
        {"h100-node.xml", &east, "gpu:a100:4", {"GPU spec", "Gres"}},
        {"mixed-node.xml", &east, "gpu:a100:4", {"GPU spec", "Gres"}},
        {"a100-three.xml", &east, "gpu:a100:4", {"GPU count", "Gres"}},
        {"none-node.xml", &east, "gpu:a100:4", {"GPU count", "Gres"}},
        {"none-node.xml", &cpu, "", {}},
        {"a100-node.xml", &east, "gpu:a100:2", {"Gres"}},
    };
    for (auto &c : t) {
        std::vector<NodeFinding> f = check_node(*c.pool, load(c.file), c.gres, true);
        ck_assert_msg(f.size() == c.want.size(), "%s on %s: %zu findings", c.file, c.pool->name.c_str(), f.size());
        for (const char *w : c.want) ck_assert_msg(has(f, w), "%s on %s: no %s finding", c.file, c.pool->name.c_str(), w);
        for (const NodeFinding &x : f) ck_assert(!x.detected.empty() && !x.expected.empty());
    }
    std::vector<NodeFinding> f = check_node(east, load("h100-node.xml"), "", false);
    ck_assert_uint_eq(f.size(), 1);  // spec only; Gres not known
}
END_TEST

START_TEST(test_bad_xml) {
    std::vector<GpuDevice> g;
    std::string err;
    ck_assert(!detect_gpus(srcpath("etc/idletime.json"), g, err));
    ck_assert(err.find("hwloc") != std::string::npos);
    ck_assert(!detect_gpus("/nonexistent/topo.xml", g, err));
}
END_TEST

START_TEST(test_gres_parse) {
    auto g = parse_gres_gpus("gpu:a100:4(S:0-1),gpu:2,mps:100");
    ck_assert_uint_eq(g.size(), 2);
    ck_assert_cxx_str_eq(g[0].type, "a100");
    ck_assert_uint_eq(g[0].count, 4);
    ck_assert_cxx_str_eq(g[1].type, "");
    ck_assert_uint_eq(g[1].count, 2);
    ck_assert_uint_eq(parse_gres_gpus("(null)").size(), 0);
    ck_assert_cxx_str_eq(describe({}), "no NVIDIA GPU");
}
END_TEST

START_TEST(test_texts) {
    const Pool &east = *example_config().pool("a100-east");
    std::vector<NodeFinding> f = check_node(east, load("none-node.xml"), "gpu:a100:4", true);
    ck_assert_uint_eq(f.size(), 2);
    const std::string text = finding_text(f[0]), reason = drain_reason(f);  // the macros evaluate twice
    ck_assert_cxx_str_eq(text, "GPU count: detected 0 (no NVIDIA GPU), expected 4 (pool a100-east)");
    ck_assert_str_eq(reason.c_str(),
                     "idletime: GPU count 0 (no NVIDIA GPU) != 4 (pool a100-east); Gres no NVIDIA GPU != Gres=gpu:a100:4");
    ck_assert_uint_eq(drain_reason(f, 20).size(), 20);
    ck_assert(drain_reason({}).empty());
}
END_TEST

START_TEST(test_slurmd_node_name) {
    using V = std::vector<std::string>;
    struct {
        V argv;
        const char *env;
        const char *host;
        const char *want;
    } t[] = {
        {{"slurmd", "-D", "-N", "a100-1", "-f", "/x.conf"}, nullptr, "box", "a100-1"},
        {{"slurmd", "-Na100-2"}, "other", "box", "a100-2"},
        {{"slurmd", "-DN", "h100-3"}, nullptr, "box", "h100-3"},
        {{"slurmd", "-f", "-N", "-N", "cpu-1"}, nullptr, "box", "cpu-1"},  // "-N" is -f's argument
        {{"slurmd", "-N", "a", "-N", "b"}, nullptr, "box", "b"},
        {{"slurmd", "-D", "--", "-N", "x"}, nullptr, "gpu17.site.org", "gpu17"},
        {{"slurmd", "-D"}, "a100-4", "box", "a100-4"},
        {{"slurmd", "-D"}, "", "box.local", "box"},
        {{"slurmd", "-N"}, nullptr, "box", "box"},
    };
    for (auto &c : t) {
        const std::string got = slurmd_node_name(c.argv, c.env, c.host);
        ck_assert_cxx_str_eq(got, c.want);
    }
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("views_gpu");
    TCase *t = tcase_create("gpu");
    tcase_add_test(t, test_detect);
    tcase_add_test(t, test_compare);
    tcase_add_test(t, test_bad_xml);
    tcase_add_test(t, test_gres_parse);
    tcase_add_test(t, test_texts);
    tcase_add_test(t, test_slurmd_node_name);
    suite_add_tcase(s, t);
    return s;
}

VIEWS_CHECK_MAIN
