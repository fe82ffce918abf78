#include "views/gpu.hpp"

#include <hwloc.h>

#include <cstdio>
#include <map>
#include <memory>

namespace idletime::views {
namespace {

struct DeviceId {
    unsigned id;
    const char *spec;
};
// NVIDIA PCI device ids of the data-centre parts idletime pools are made of.
constexpr DeviceId kDevices[] = {
    {0x20b0, "a100"}, {0x20b2, "a100"}, {0x20b3, "a100"}, {0x20b5, "a100"}, {0x20f1, "a100"},
    {0x20f3, "a100"}, {0x2330, "h100"}, {0x2331, "h100"}, {0x2322, "h100"}, {0x2324, "h100"},
    {0x20b6, "a10"},  {0x2236, "a10"},  {0x1db4, "v100"}, {0x1db5, "v100"}, {0x1db6, "v100"},
    {0x1eb8, "t4"},   {0x26b9, "l40s"}, {0x26b5, "l40"},  {0x2335, "h200"},
};

std::string hex4(unsigned v) {
    char b[8];
    std::snprintf(b, sizeof b, "%04x", v & 0xffff);
    return b;
}

// GPUModel of an OS device below the PCI device (NVML or CUDA backend), else the PCI name.
std::string model_of(hwloc_obj_t pci) {
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
        if (const char *m = hwloc_obj_get_info_by_name(c, "GPUModel")) return m;
    }
    const char *d = hwloc_obj_get_info_by_name(pci, "PCIDevice");
    return d ? d : "";
}

using Topo = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

bool load(const std::string &xml, Topo &topo, std::string &err) {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return err = "hwloc_topology_init failed", false;
    topo.reset(t);
    if (!xml.empty() && hwloc_topology_set_xml(t, xml.c_str()) != 0)
        return err = xml + ": not an hwloc XML topology (hwloc could not read it)", false;
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(t) != 0)
        return err = (xml.empty() ? std::string("this machine") : xml) + ": hwloc could not load the topology", false;
    return true;
}

}  // namespace

std::string spec_of_device(unsigned device_id) {
    for (const DeviceId &d : kDevices)
        if (d.id == device_id) return d.spec;
    return "";
}

bool detect_gpus(const std::string &xml_path, std::vector<GpuDevice> &out, std::string &err) {
    out.clear();
    Topo topo(nullptr, hwloc_topology_destroy);
    if (!load(xml_path, topo, err)) return false;
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_pcidev(topo.get(), o));) {
        const auto &p = o->attr->pcidev;
        unsigned cls = p.class_id >> 8;  // 0x03 = display controller (VGA or 3D)
        if (p.vendor_id != kNvidiaVendor || cls != 0x03) continue;
        char bus[32];
        std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.%01x", p.domain, p.bus, p.dev, p.func);
        out.push_back(GpuDevice{bus, p.vendor_id, p.device_id, model_of(o), spec_of_device(p.device_id)});
    }
    return true;
}

std::vector<GresGpu> parse_gres_gpus(const std::string &gres) {
    std::vector<GresGpu> out;
    size_t pos = 0;
    while (pos < gres.size()) {
        size_t end = gres.find(',', pos);
        // a "(S:0-1)" suffix may contain commas: skip to the closing parenthesis
        size_t paren = gres.find('(', pos);
        if (paren != std::string::npos && paren < end) end = gres.find(',', gres.find(')', paren));
        if (end == std::string::npos) end = gres.size();
        std::string item = gres.substr(pos, end - pos);
        pos = end + 1;
        item = item.substr(0, item.find('('));
        if (item.rfind("gpu", 0) != 0 || (item.size() > 3 && item[3] != ':')) continue;
        std::vector<std::string> f;
        for (size_t a = 0, b; a <= item.size(); a = b + 1) {
            b = item.find(':', a);
            if (b == std::string::npos) b = item.size();
            f.push_back(item.substr(a, b - a));
        }
        GresGpu g;
        if (f.size() == 2) g.count = uint32_t(std::strtoul(f[1].c_str(), nullptr, 10));
        if (f.size() >= 3) g.type = f[1], g.count = uint32_t(std::strtoul(f[2].c_str(), nullptr, 10));
        if (f.size() == 1) g.count = 1;
        out.push_back(g);
    }
    return out;
}

std::string describe(const std::vector<GpuDevice> &gpus) {
    if (gpus.empty()) return "no NVIDIA GPU";
    std::map<std::string, int> groups;  // "a100 (model) [10de:20b2]" -> count
    for (const GpuDevice &g : gpus)
        groups[(g.spec.empty() ? "unknown" : g.spec) + " (" + g.model + ") [" + hex4(g.vendor_id) + ":" +
               hex4(g.device_id) + "]"]++;
    std::string out;
    for (const auto &[k, n] : groups) out += (out.empty() ? "" : " + ") + std::to_string(n) + " x " + k;
    return out;
}

std::vector<NodeFinding> check_node(const Pool &pool, const std::vector<GpuDevice> &gpus, const std::string &gres,
                                    bool gres_known) {
    std::vector<NodeFinding> out;
    if (gpus.size() != pool.node.gpus)
        out.push_back({"GPU count", std::to_string(gpus.size()) + " (" + describe(gpus) + ")",
                       std::to_string(pool.node.gpus) + " (pool " + pool.name + ")"});
    if (!pool.gpu_spec.empty()) {
        uint32_t wrong = 0;
        for (const GpuDevice &g : gpus) wrong += g.spec != pool.gpu_spec;
        if (wrong)
            out.push_back({"GPU spec", describe(gpus), pool.gpu_spec + " on every GPU (pool " + pool.name + ")"});
    }
    if (!gres_known) return out;
    std::map<std::string, uint32_t> typed;
    uint32_t total = 0;
    for (const GresGpu &g : parse_gres_gpus(gres)) {
        total += g.count;
        if (!g.type.empty()) typed[g.type] += g.count;
    }
    std::map<std::string, uint32_t> found;
    for (const GpuDevice &g : gpus) found[g.spec.empty() ? "unknown" : g.spec]++;
    bool typed_ok = true;
    for (const auto &[t, n] : typed) typed_ok = typed_ok && found[t] == n;
    if (total != gpus.size() || !typed_ok)
        out.push_back({"Gres", describe(gpus), "Gres=" + (gres.empty() ? std::string("(none)") : gres)});
    return out;
}

std::string finding_text(const NodeFinding &f) {
    return f.what + ": detected " + f.detected + ", expected " + f.expected;
}

std::string drain_reason(const std::vector<NodeFinding> &f, size_t max_len) {
    std::string reason;
    for (const NodeFinding &x : f)
        reason += (reason.empty() ? "idletime: " : "; ") + x.what + " " + x.detected + " != " + x.expected;
    return reason.size() > max_len ? reason.substr(0, max_len) : reason;
}

std::string slurmd_node_name(const std::vector<std::string> &argv, const char *env_name, const std::string &host) {
    // getopt over slurmd's short options ("bcCd:Df:F::GhL:Mn:N:svVZ"): the last -N wins.
    const std::string with_arg = "dfLnN";
    std::string name;
    for (size_t i = 1; i < argv.size(); i++) {
        const std::string &a = argv[i];
        if (a == "--") break;
        if (a.size() < 2 || a[0] != '-' || a[1] == '-') continue;
        for (size_t k = 1; k < a.size(); k++) {
            if (a[k] == 'F') break;  // optional argument: the rest of the word
            if (with_arg.find(a[k]) == std::string::npos) continue;
            std::string v = k + 1 < a.size() ? a.substr(k + 1) : (i + 1 < argv.size() ? argv[++i] : "");
            if (a[k] == 'N') name = v;
            break;
        }
    }
    if (!name.empty()) return name;
    if (env_name && *env_name) return env_name;
    return host.substr(0, host.find('.'));
}

}  // namespace idletime::views
