// Reader of Slurm accounting records as `sacct --parsable2` prints them: one header line naming
// the columns, then one '|'-separated line per job or step. Columns are found by name, so any
// --format order works and extra columns are ignored.
//   required: JobID, Account, Submit, Start, End, State, and AllocTRES or ReqTRES
//   optional: User, Partition, QOS, NNodes (else the TRES "node=" count, else 1)
// Steps (JobID with a '.': 123.batch, 123.extern, 123.0) are skipped and counted; so are earlier
// records of a requeued job (sacct -D lists each run). Times are sacct's local ISO form
// (2026-11-30T12:00:00), read as UTC: only differences count (a DST change inside the trace shifts
// the jobs on one side by an hour). "Unknown"/"None" Start = never ran; "Unknown" End = running.
#include "replay/trace.hpp"
#include "replay/trace_text.hpp"

#include <array>
#include <ctime>
#include <istream>
#include <limits>
#include <set>

namespace idletime::replay {

namespace {

enum Col { JobId, Account, Submit, Start, End, State, Alloc, Req, User, Partition, Qos, NNodes, NCols };
constexpr std::array<const char *, NCols> kNames{"JobID", "Account", "Submit", "Start", "End", "State",
                                                 "AllocTRES", "ReqTRES", "User", "Partition", "QOS", "NNodes"};
constexpr size_t kAbsent = std::numeric_limits<size_t>::max();
constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();

std::array<size_t, NCols> header_positions(const std::string &header, const std::string &origin)
{
    auto names = text::split(header, '|');
    std::array<size_t, NCols> pos{};
    for (size_t c = 0; c < NCols; c++) {
        pos[c] = kAbsent;
        for (size_t i = 0; i < names.size(); i++)
            if (names[i] == kNames[c])
                pos[c] = i;
    }
    for (Col c : {JobId, Account, Submit, Start, End, State})
        if (pos[c] == kAbsent)
            throw TraceError(origin + ":1: column '" + kNames[c] +
                             "' missing (sacct --parsable2 needs JobID, Account, Submit, Start, End, "
                             "State and AllocTRES or ReqTRES; User, Partition, QOS, NNodes are optional)");
    if (pos[Alloc] == kAbsent && pos[Req] == kAbsent)
        throw TraceError(origin + ":1: column 'AllocTRES' or 'ReqTRES' missing (the job's GPUs are "
                         "read from gres/gpu in it)");
    return pos;
}

// Slurm's first release was 2002; a year outside these is a corrupt record, not history.
constexpr int kFirstYear = 2000, kLastYear = 2099;

int days_in_month(int y, int mo)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[mo - 1] + (mo == 2 && leap ? 1 : 0);
}

// Epoch seconds of "YYYY-MM-DDTHH:MM:SS" read as UTC; kUnset for Unknown/None/empty; false if bad.
bool parse_time(const std::string &s, int64_t &out)
{
    if (s.empty() || s == "Unknown" || s == "None") {
        out = kUnset;
        return true;
    }
    static const char kShape[] = "dddd-dd-ddTdd:dd:dd";  // digits only: no sign, blank or 'Z'
    if (s.size() != sizeof(kShape) - 1)
        return false;
    for (size_t i = 0; i < s.size(); i++)
        if (kShape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != kShape[i])
            return false;
    auto num = [&](size_t at, size_t len) { return std::stoi(s.substr(at, len)); };
    int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
    if (y < kFirstYear || y > kLastYear || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
        mi > 59 || se > 60)
        return false;
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    out = int64_t(timegm(&tm));
    return true;
}

// TRES list "cpu=8,mem=64G,node=2,gres/gpu=8,gres/gpu:a100=8": total GPUs, typed models, nodes.
bool parse_tres(const std::string &s, TraceRecord &r, int &tres_nodes)
{
    int64_t plain = -1, typed = 0;
    for (const auto &item : text::split(s, ',')) {
        if (item.empty())
            continue;
        auto eq = item.find('=');
        if (eq == std::string::npos)
            return false;
        std::string key = item.substr(0, eq), val = item.substr(eq + 1);
        int64_t n = 0;
        bool num = text::to_int(val, n) && n >= 0 && n <= text::kMaxCount;
        if (key == "gres/gpu") {
            if (!num)
                return false;
            plain = n;
        } else if (key.rfind("gres/gpu:", 0) == 0) {
            if (!num)
                return false;
            typed += n;
            if (n > 0)
                r.models.push_back(key.substr(9));
        } else if (key == "node") {
            if (!num)
                return false;
            tres_nodes = int(n);
        }
    }
    if (typed > text::kMaxCount)
        return false;
    r.num_gpu = int(plain >= 0 ? plain : typed);
    return true;
}

const std::set<std::string> &known_states()
{
    static const std::set<std::string> s{
        "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY",
        "PENDING", "PREEMPTED", "RUNNING", "REQUEUED", "RESIZING", "REVOKED", "SUSPENDED", "TIMEOUT"};
    return s;
}

class SacctReader final : public TraceReader {
public:
    std::string_view kind() const override { return "sacct"; }

    std::vector<TraceRecord> read(std::istream &in, const std::string &origin, ReadStats &st) const override
    {
        std::string line;
        text::Lines lines(in, origin);
        if (!lines.next(line))
            throw TraceError(origin + ": empty file, expected a sacct --parsable2 header line");
        auto pos = header_positions(line, origin);
        size_t ncols = text::split(line, '|').size();
        std::vector<TraceRecord> out;
        std::vector<std::array<int64_t, 3>> times;  // submit, start, end (epoch or kUnset)
        std::map<std::string, size_t> seen;         // JobID -> index in out
        while (lines.next(line)) {
            if (line.empty())
                continue;
            st.rows++;
            std::string where = lines.where();
            auto f = text::split(line, '|');
            if (f.size() != ncols) {
                st.add_bad("field count", where + ": " + std::to_string(f.size()) + " fields, header has " +
                                              std::to_string(ncols));
                continue;
            }
            TraceRecord r;
            std::array<int64_t, 3> t{};
            if (!row(f, pos, where, st, r, t))
                continue;
            auto it = seen.find(r.name);
            if (it != seen.end()) {  // sacct -D: the later record is the run that counts
                st.duplicates_skipped++;
                out[it->second] = r;
                times[it->second] = t;
                continue;
            }
            seen[r.name] = out.size();
            out.push_back(std::move(r));
            times.push_back(t);
        }
        rebase(out, times, st);
        return out;
    }

private:
    static bool row(const std::vector<std::string> &f, const std::array<size_t, NCols> &pos,
                    const std::string &where, ReadStats &st, TraceRecord &r, std::array<int64_t, 3> &t)
    {
        r.name = f[pos[JobId]];
        if (r.name.empty())
            return st.add_bad("empty JobID", where + ": empty JobID"), false;
        if (std::string why = job_name_problem(r.name); !why.empty())
            return st.add_bad("bad JobID", where + ": JobID " + why), false;
        if (r.name.find('.') != std::string::npos)
            return st.steps_skipped++, false;
        auto opt = [&](Col c) { return pos[c] == kAbsent ? std::string() : f[pos[c]]; };
        r.account = f[pos[Account]];
        r.user = opt(User);
        r.partition = opt(Partition);
        r.qos_name = opt(Qos);
        if (r.account.empty())
            return st.add_bad("empty Account", where + ": job " + r.name + " has no Account"), false;
        std::string state = f[pos[State]].substr(0, f[pos[State]].find(' '));  // "CANCELLED by 0"
        if (!known_states().count(state))
            return st.add_bad("unknown State", where + ": State '" + f[pos[State]] + "' unknown"), false;
        const Col times[] = {Submit, Start, End};
        for (int i = 0; i < 3; i++)
            if (!parse_time(f[pos[times[i]]], t[size_t(i)]))
                return st.add_bad("bad time", where + ": " + kNames[times[i]] + " '" + f[pos[times[i]]] +
                                                  "' is not a date YYYY-MM-DDTHH:MM:SS from 2000 to 2099, Unknown or None"), false;
        if (t[0] == kUnset)
            return st.add_bad("no Submit time", where + ": job " + r.name + " has no Submit time"), false;
        if (t[1] != kUnset && t[1] < t[0])
            return st.add_bad("Start before Submit", where + ": job " + r.name + " starts before it was submitted"), false;
        if (t[1] != kUnset && t[2] != kUnset && t[2] < t[1])
            return st.add_bad("End before Start", where + ": job " + r.name + " ends before it starts"), false;
        std::string tres = pos[Alloc] == kAbsent ? std::string() : f[pos[Alloc]];
        if (tres.empty() && pos[Req] != kAbsent)
            tres = f[pos[Req]];  // a job that never started has no AllocTRES
        int tres_nodes = 0;
        if (!parse_tres(tres, r, tres_nodes))
            return st.add_bad("bad TRES", where + ": TRES '" + tres + "' is not a list of name=count"), false;
        int64_t nodes = tres_nodes > 0 ? tres_nodes : 1;
        if (pos[NNodes] != kAbsent && !(text::to_int(f[pos[NNodes]], nodes) && nodes >= 1 && nodes <= text::kMaxCount))
            return st.add_bad("bad NNodes", where + ": NNodes '" + f[pos[NNodes]] + "' is not a count from 1 to 1000000"), false;
        r.nodes = int(nodes);
        if (state == "RUNNING" || state == "SUSPENDED")
            t[2] = kUnset;
        return true;
    }

    // Trace second 0 = the earliest Submit; unset times become -1.
    static void rebase(std::vector<TraceRecord> &out, const std::vector<std::array<int64_t, 3>> &times,
                       ReadStats &st)
    {
        int64_t t0 = std::numeric_limits<int64_t>::max();
        for (const auto &t : times)
            t0 = std::min(t0, t[0]);
        st.epoch0 = out.empty() ? 0 : t0;
        for (size_t i = 0; i < out.size(); i++) {
            out[i].creation_s = times[i][0] - t0;
            out[i].scheduled_s = times[i][1] == kUnset ? -1 : times[i][1] - t0;
            out[i].deletion_s = times[i][1] == kUnset || times[i][2] == kUnset ? -1 : times[i][2] - t0;
        }
    }
};

}  // namespace

std::unique_ptr<TraceReader> make_sacct_reader() { return std::make_unique<SacctReader>(); }

}  // namespace idletime::replay
