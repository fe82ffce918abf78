// GPU hardware check (`idletime check --node`): detect a node's GPUs with hwloc (PCI devices of
// NVIDIA, vendor 0x10de, and their OS devices) and compare them with the node's pool spec and its
// Slurm Gres. Detection reads the live machine or an hwloc XML export (lstopo --of xml).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace idletime::views {

constexpr unsigned kNvidiaVendor = 0x10de;

struct GpuDevice {
    std::string busid;       // "0000:17:00.0"
    unsigned vendor_id = 0;  // 0x10de
    unsigned device_id = 0;  // 0x20b2 (A100 SXM4 80GB), 0x2330 (H100 SXM5)...
    std::string model;       // GPUModel of its OS device (NVML/CUDA), else PCIDevice name
    std::string spec;        // idletime GPU spec from the device id ("a100", "h100"), "" unknown
};

// xml_path "" = the live machine. False with err (hwloc's failure) when nothing could be read.
bool detect_gpus(const std::string &xml_path, std::vector<GpuDevice> &out, std::string &err);

// Known NVIDIA data-centre device ids -> spec name; "" when unknown.
std::string spec_of_device(unsigned device_id);

// What Slurm says of the node: "gpu:a100:4" style Gres (as slurm_load_node reports it).
struct GresGpu {
    std::string type;  // "" when untyped
    uint32_t count = 0;
};
// Sum of all gpu entries of a Gres string ("gpu:a100:4(S:0-1),gpu:2" -> typed a100 4 + untyped 2).
std::vector<GresGpu> parse_gres_gpus(const std::string &gres);

struct NodeFinding {
    std::string what;      // "GPU count", "GPU spec", "Gres"
    std::string detected;  // what hwloc found
    std::string expected;  // what the pool spec / Gres says
};

// Compares detected GPUs with the pool (count per node and spec) and with the node's Gres.
// gres_known=false skips the Gres comparison (node not known to Slurm, e.g. topology-only run).
std::vector<NodeFinding> check_node(const Pool &pool, const std::vector<GpuDevice> &gpus, const std::string &gres,
                                    bool gres_known);

// "GPU count: detected 0 (no NVIDIA GPU), expected 4 (pool a100-east)".
std::string finding_text(const NodeFinding &f);
// Slurm node Reason naming both values of every finding, "idletime: GPU count 0 (...) != 4 (...); ...",
// cut to max_len bytes.
std::string drain_reason(const std::vector<NodeFinding> &f, size_t max_len = 250);

// The NodeName a slurmd runs as, from its argv ("-N NAME", "-NNAME", "-DN NAME"); else
// env_name (SLURMD_NODENAME, may be null or empty); else the short host name (what slurmd does when
// the host name is the NodeName).
std::string slurmd_node_name(const std::vector<std::string> &argv, const char *env_name, const std::string &host);

// One-line summary "4 x a100 (NVIDIA A100-SXM4-80GB) [10de:20b2]" / "no NVIDIA GPU".
std::string describe(const std::vector<GpuDevice> &gpus);

}  // namespace idletime::views
