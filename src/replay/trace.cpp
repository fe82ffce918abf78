// Readers of trace files. The openb pod lists are plain CSV without quoting (checked:
// no field of the 25 files holds a comma or a quote), so a split on ',' is exact.
#include "replay/trace.hpp"
#include "replay/trace_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <istream>
#include <map>

namespace idletime::replay {

const char *trace_qos_name(TraceQos q)
{
    switch (q) {
    case TraceQos::LatencySensitive: return "LS";
    case TraceQos::BestEffort: return "BE";
    case TraceQos::Burstable: return "Burstable";
    case TraceQos::Guaranteed: return "Guaranteed";
    }
    return "?";
}

namespace {

// Length of the well-formed UTF-8 sequence at text[i] (2 to 4 bytes), 0 when there is none.
size_t utf8_length(const std::string &text, size_t i)
{
    auto byte = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
    unsigned char c = byte(i);
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
        if ((byte(i + k) & 0xc0) != 0x80)
            return 0;
    return n;
}

}  // namespace

std::string printable(const std::string &text)
{
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    auto escape = [&](unsigned char c) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    };
    for (size_t i = 0; i < text.size();) {
        auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f || c == '\\')
                escape(c);
            else
                out += static_cast<char>(c);
            i++;
            continue;
        }
        size_t n = utf8_length(text, i);
        bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;  // U+0080-U+009F
        size_t len = std::max<size_t>(n, 1);
        if (n == 0 || c1)
            for (size_t k = 0; k < len; k++)
                escape(static_cast<unsigned char>(text[i + k]));
        else
            out.append(text, i, n);
        i += len;
    }
    return out;
}

std::string job_name_problem(const std::string &name)
{
    if (printable(name) == name)
        return "";
    return "'" + name + "' holds a control character, a backslash or a byte that is not UTF-8";
}

void ReadStats::add_bad(const std::string &reason, const std::string &where_detail)
{
    if (bad[reason]++ == 0)
        first_bad[reason] = printable(where_detail);
}

int ReadStats::bad_total() const
{
    int n = 0;
    for (const auto &[reason, count] : bad)
        n += count;
    return n;
}

std::vector<TraceRecord> TraceReader::read(std::istream &in, const std::string &origin) const
{
    ReadStats st;
    auto out = read(in, origin, st);
    if (st.bad_total() > 0)
        throw TraceError(st.first_bad.begin()->second + " (" + std::to_string(st.bad_total()) +
                         " bad rows)");
    return out;
}

namespace {

using text::split;

int64_t parse_int(const std::string &text, bool empty_ok, const std::string &where)
{
    if (text.empty()) {
        if (empty_ok)
            return -1;
        throw TraceError(where + ": empty value, expected an integer");
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0)
        throw TraceError(where + ": '" + text + "' is not a non-negative integer");
    return v;
}

TraceQos parse_qos(const std::string &text, const std::string &where)
{
    static const std::map<std::string, TraceQos, std::less<>> names{
        {"LS", TraceQos::LatencySensitive}, {"BE", TraceQos::BestEffort},
        {"Burstable", TraceQos::Burstable}, {"Guaranteed", TraceQos::Guaranteed}};
    auto it = names.find(text);
    if (it == names.end())
        throw TraceError(where + ": qos '" + text + "' unknown, allowed: LS, BE, Burstable, Guaranteed");
    return it->second;
}

// Column positions of the fields the openb reader needs.
enum Col { Name, NumGpu, GpuMilli, GpuSpec, Qos, Creation, Deletion, Scheduled, NCols };
constexpr std::array<const char *, NCols> kColNames{
    "name", "num_gpu", "gpu_milli", "gpu_spec", "qos", "creation_time", "deletion_time",
    "scheduled_time"};

std::array<size_t, NCols> header_positions(const std::string &header, const std::string &origin)
{
    auto names = split(header, ',');
    std::array<size_t, NCols> pos{};
    for (size_t c = 0; c < NCols; c++) {
        size_t i = 0;
        while (i < names.size() && names[i] != kColNames[c])
            i++;
        if (i == names.size())
            throw TraceError(origin + ":1: column '" + kColNames[c] +
                             "' missing (openb pod lists need name,num_gpu,gpu_milli,gpu_spec,"
                             "qos,creation_time,deletion_time,scheduled_time; a sacct or SWF trace needs --kind sacct or swf)");
        pos[c] = i;
    }
    return pos;
}

class OpenbReader final : public TraceReader {
public:
    std::string_view kind() const override { return "openb"; }

    std::vector<TraceRecord> read(std::istream &in, const std::string &origin, ReadStats &stats) const override
    {
        std::string line;
        text::Lines lines(in, origin);
        if (!lines.next(line))
            throw TraceError(origin + ": empty file, expected an openb pod list header");
        auto pos = header_positions(line, origin);
        size_t ncols = split(line, ',').size();
        std::vector<TraceRecord> out;
        std::map<std::string, size_t> seen;  // pod name -> its line
        while (lines.next(line)) {
            if (line.empty())
                continue;
            auto f = split(line, ',');
            std::string where = lines.where();
            if (f.size() != ncols)
                throw TraceError(where + ": " + std::to_string(f.size()) + " fields, header has " +
                                 std::to_string(ncols));
            out.push_back(record(f, pos, where));
            auto [it, fresh] = seen.emplace(out.back().name, lines.lineno());
            if (!fresh)
                throw TraceError(where + ": pod '" + out.back().name + "' is also on line " +
                                 std::to_string(it->second) + " (each pod once)");
            stats.rows++;
        }
        return out;
    }

private:
    static TraceRecord record(const std::vector<std::string> &f, const std::array<size_t, NCols> &pos,
                              const std::string &where)
    {
        TraceRecord r;
        r.name = f[pos[Name]];
        if (r.name.empty())
            throw TraceError(where + ": empty pod name");
        if (std::string why = job_name_problem(r.name); !why.empty())
            throw TraceError(where + ": pod name " + why);
        int64_t gpus = parse_int(f[pos[NumGpu]], false, where + " num_gpu");
        int64_t milli = parse_int(f[pos[GpuMilli]], false, where + " gpu_milli");
        if (gpus > text::kMaxCount || milli > 1000)
            throw TraceError(where + ": num_gpu " + f[pos[NumGpu]] + " or gpu_milli " + f[pos[GpuMilli]] +
                             " out of range (at most 1000000 GPUs, 1000 milli-GPUs)");
        r.num_gpu = static_cast<int>(gpus);
        r.gpu_milli = static_cast<int>(milli);
        if (!f[pos[GpuSpec]].empty())
            r.models = split(f[pos[GpuSpec]], '|');
        r.qos = parse_qos(f[pos[Qos]], where);
        r.qos_name = f[pos[Qos]];
        r.creation_s = parse_int(f[pos[Creation]], false, where + " creation_time");
        r.scheduled_s = parse_int(f[pos[Scheduled]], true, where + " scheduled_time");
        r.deletion_s = parse_int(f[pos[Deletion]], true, where + " deletion_time");
        if (std::max({r.creation_s, r.scheduled_s, r.deletion_s}) > text::kMaxTraceSeconds)
            throw TraceError(where + ": a time beyond 3155760000 s (100 years)");
        if (r.scheduled_s >= 0 && r.scheduled_s < r.creation_s)
            throw TraceError(where + ": scheduled_time " + std::to_string(r.scheduled_s) +
                             " is before creation_time " + std::to_string(r.creation_s));
        if (r.deletion_s >= 0 && r.deletion_s < std::max(r.creation_s, r.scheduled_s))
            throw TraceError(where + ": deletion_time " + std::to_string(r.deletion_s) +
                             " is before creation_time or scheduled_time");
        return r;
    }
};

}  // namespace

std::unique_ptr<TraceReader> make_trace_reader(std::string_view kind, int procs_per_gpu)
{
    if (kind == "openb")
        return std::make_unique<OpenbReader>();
    if (kind == "sacct")
        return make_sacct_reader();
    if (kind == "swf")
        return make_swf_reader(procs_per_gpu);
    return nullptr;
}

std::string trace_reader_kinds() { return "openb, sacct, swf"; }

}  // namespace idletime::replay
