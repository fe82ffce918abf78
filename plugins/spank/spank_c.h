// <slurm/spank.h> declares the slurm_spank_* hooks before its own extern "C" block; wrap it so
// our definitions get C linkage.
#pragma once
extern "C" {
#include <slurm/spank.h>
}
