// Reader of the Standard Workload Format (Parallel Workloads Archive, Feitelson et al.): lines
// starting with ';' are header comments; every other non-blank line is one job of 18 fields
// separated by blanks, -1 meaning unknown:
//    1 job number   2 submit time (s)   3 wait time (s)   4 run time (s)   5 allocated processors
//    6 average CPU time   7 used memory   8 requested processors   9 requested time
//   10 requested memory   11 status (1 completed, 0 failed, 5 cancelled, 2-4 partial/checkpoint)
//   12 user id   13 group id   14 executable number   15 queue number   16 partition number
//   17 preceding job   18 think time
// A processor is one GPU unless `procs_per_gpu` says otherwise (SWF logs count processors).
// Used: 1-5, 8, 11-13, 15, 16. Group -> account "g<id>", user "u<id>", queue -> QOS "q<n>",
// partition -> "p<n>". Allocated processors fall back to requested ones. Wait -1 with a known
// run time: start = submit (counted). Run time -1: never ran.
#include "replay/trace.hpp"
#include "replay/trace_text.hpp"

#include <cmath>
#include <cstdlib>
#include <istream>
#include <map>

namespace idletime::replay {

namespace {

// Integer of an SWF field; SWF logs sometimes write "12.00" for whole numbers.
bool field(const std::string &s, int64_t &v)
{
    if (text::to_int(s, v))
        return true;
    char *end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(d) || std::fabs(d) > 9e15)
        return false;
    v = int64_t(std::llround(d));
    return true;
}

class SwfReader final : public TraceReader {
public:
    explicit SwfReader(int procs_per_gpu) : procs_per_gpu_(procs_per_gpu) {}
    std::string_view kind() const override { return "swf"; }

    std::vector<TraceRecord> read(std::istream &in, const std::string &origin, ReadStats &st) const override
    {
        std::vector<TraceRecord> out;
        std::string line;
        bool any = false;
        text::Lines lines(in, origin);
        std::map<std::string, size_t> seen;  // "swf-N" -> its line
        while (lines.next(line)) {
            any = true;
            auto w = text::words(line);
            if (w.empty() || w[0][0] == ';')
                continue;
            st.rows++;
            std::string where = lines.where();
            if (w.size() != 18) {
                st.add_bad("field count", where + ": " + std::to_string(w.size()) + " fields, SWF has 18");
                continue;
            }
            TraceRecord r;
            if (!row(w, where, st, r))
                continue;
            auto [it, fresh] = seen.emplace(r.name, lines.lineno());
            if (!fresh) {
                st.add_bad("duplicate job number", where + ": job number " + w[0] + " is also on line " +
                                                       std::to_string(it->second));
                continue;
            }
            out.push_back(std::move(r));
        }
        if (!any)
            throw TraceError(origin + ": empty file, expected Standard Workload Format lines");
        return out;
    }

private:
    bool row(const std::vector<std::string> &w, const std::string &where, ReadStats &st, TraceRecord &r) const
    {
        int64_t v[18];
        for (int i : {0, 1, 2, 3, 4, 7, 10, 11, 12, 14, 15})
            if (!field(w[size_t(i)], v[i]))
                return st.add_bad("not a number", where + ": field " + std::to_string(i + 1) + " '" +
                                                      w[size_t(i)] + "' is not a number"), false;
        if (v[0] < 0)
            return st.add_bad("bad job number", where + ": job number " + w[0] + " < 0"), false;
        if (v[1] < 0)
            return st.add_bad("no submit time", where + ": submit time " + w[1] + " unknown"), false;
        if (v[10] < -1 || v[10] > 5)
            return st.add_bad("bad status", where + ": status " + w[10] + " not in -1..5"), false;
        int64_t procs = v[4] > 0 ? v[4] : v[7];
        if (procs < 0)
            return st.add_bad("no processor count", where + ": allocated and requested processors unknown"), false;
        if (procs > text::kMaxCount * procs_per_gpu_)
            return st.add_bad("count out of range", where + ": " + std::to_string(procs) + " processors"), false;
        for (int i : {1, 2, 3})
            if (v[i] > text::kMaxTraceSeconds || v[i] < -1)
                return st.add_bad("time out of range", where + ": field " + std::to_string(i + 1) + " '" +
                                                           w[size_t(i)] + "' is not -1 or 0 to 3155760000 s"), false;
        r.name = "swf-" + std::to_string(v[0]);
        r.num_gpu = int((procs + procs_per_gpu_ - 1) / procs_per_gpu_);
        r.account = v[12] >= 0 ? "g" + std::to_string(v[12]) : "g-unknown";
        r.user = v[11] >= 0 ? "u" + std::to_string(v[11]) : "u-unknown";
        r.qos_name = v[14] >= 0 ? "q" + std::to_string(v[14]) : "";
        r.partition = v[15] >= 0 ? "p" + std::to_string(v[15]) : "";
        r.creation_s = v[1];
        if (v[3] < 0) {
            r.scheduled_s = r.deletion_s = -1;  // no run time: replays as never scheduled
            return true;
        }
        if (v[2] < 0)
            st.start_assumed++;
        r.scheduled_s = v[1] + std::max<int64_t>(0, v[2]);
        r.deletion_s = r.scheduled_s + v[3];
        return true;
    }

    int procs_per_gpu_;
};

}  // namespace

std::unique_ptr<TraceReader> make_swf_reader(int procs_per_gpu)
{
    return std::make_unique<SwfReader>(procs_per_gpu < 1 ? 1 : procs_per_gpu);
}

}  // namespace idletime::replay
