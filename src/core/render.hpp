// Rendering the Slurm side of a config. Pure: same Config, byte-identical text.
#pragma once
#include <string>

#include "core/config.hpp"

namespace idletime {

enum class Section { Partitions, Nodes, Gres, Sacctmgr, All };

bool section_parse(const std::string &name, Section &out);
const char *section_names();  // for error messages

// slurm.conf lines: preemption settings, AccountingStorageTRES, PartitionName lines.
std::string render_partitions(const Config &cfg);
// slurm.conf NodeName lines, one per node (sites with their own node lines skip this).
std::string render_nodes(const Config &cfg);
// gres.conf hint lines per pool (device files are the site's: /dev/nvidia[0-N]).
std::string render_gres(const Config &cfg);
// POSIX sh script for sacctmgr: `sh SCRIPT objects|limits|all`, idempotent.
std::string render_sacctmgr(const Config &cfg);
std::string render(const Config &cfg, Section s);

// "cpu=8,gres/gpu=4,mem=16000M" for a quota (its QOS GrpTRES).
std::string quota_grp_tres(const Quota &q);

}  // namespace idletime
