/*
 * version_guard.c - linked into every idletime Slurm plugin. When the plugin is loaded into a
 * Slurm other than the one it was built for, logs one line naming both versions and the fix,
 * before Slurm's own version check refuses the plugin (Slurm's line names only the plugin's).
 *
 * Runs at dlopen() time (a constructor). The running Slurm's exact release is the plugin_version
 * of a Slurm plugin that process already loaded (auth/munge, select/...; not SPANK plugins, which
 * carry their own build's release, nor other idletime plugins), found by walking the loaded
 * objects. Without one (sbatch loads SPANK plugins first), the API generation of the host's
 * libslurmfull (slurm_api_version()) names its series. Nothing is logged when neither is found
 * or they agree. Never blocks and never fails the load by itself (Slurm's own check refuses it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>
#include <slurm/slurm_version.h>

extern const char plugin_type[];
extern const uint32_t plugin_version;

struct host_seen {
	const char *self;   /* our own object's path */
	uint32_t version;   /* plugin_version of the first other Slurm plugin, or 0 */
};

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct host_seen *h = arg;
	const char *name = info->dlpi_name;
	void *handle;
	const uint32_t *v;
	const char *t;

	(void) size;
	if (h->version || !name || !*name || (h->self && !strcmp(name, h->self)))
		return h->version != 0;
	if (!(handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)))
		return 0;
	v = dlsym(handle, "plugin_version");
	t = dlsym(handle, "plugin_type");
	/* Another idletime plugin is no witness of the host's version, nor a SPANK plugin (its
	 * plugin_version is its own build's release, e.g. a site plugin built for 24.11.4). */
	if (v && t && strncmp(t + strcspn(t, "/"), "/idletime", 9) && strcmp(t, "spank")) {
		h->version = *v;
	}
	dlclose(handle);
	return h->version != 0;
}

static void version_str(uint32_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%02u.%u", (unsigned) SLURM_VERSION_MAJOR(v), (unsigned) SLURM_VERSION_MINOR(v),
		 (unsigned) SLURM_VERSION_MICRO(v));
}

/* The release series of a libslurm API generation (slurm_api_version() >> 16; META's API_CURRENT). */
static const char *series_of_api(unsigned api)
{
	static const char *const series[] = { "22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05" };

	return (api >= 38 && api - 38 < sizeof(series) / sizeof(series[0])) ? series[api - 38] : NULL;
}

/* Without another Slurm plugin to read the exact release from (sbatch loads SPANK plugins first),
 * the host's libslurmfull tells its API generation: enough to tell 22.05 from 24.11. */
static int host_from_api(char *host, size_t len, const char *built)
{
	long (*api_version)(void);
	const char *series;
	unsigned api;

	*(void **) &api_version = dlsym(RTLD_DEFAULT, "slurm_api_version");
	if (!api_version)
		return 0;
	api = (unsigned) (api_version() >> 16);
	series = series_of_api(api);
	if (series && !strncmp(built, series, 5))
		return 0;
	if (series)
		snprintf(host, len, "%s (libslurm API %u)", series, api);
	else
		snprintf(host, len, "with libslurm API %u", api);
	return 1;
}

__attribute__((constructor)) static void idletime_version_guard(void)
{
	struct host_seen h = { 0 };
	Dl_info self;
	/* SPANK plugins need only the same major.minor (as Slurm checks); others the exact release. */
	uint32_t mask = strcmp(plugin_type, "spank") ? 0xffffff : 0xffff00;
	char built[32], host[64];

	if (dladdr((void *) &plugin_version, &self) && self.dli_fname)
		h.self = self.dli_fname;
	version_str(plugin_version, built, sizeof(built));
	dl_iterate_phdr(visit, &h);
	if (h.version) {
		if ((h.version & mask) == (plugin_version & mask))
			return;
		version_str(h.version, host, sizeof(host));
	} else if (!host_from_api(host, sizeof(host), built)) {
		return;
	}
	slurm_error("idletime: %s (%s) was built for Slurm %s but this is Slurm %s: not loaded; rebuild idletime against this Slurm (./configure --with-slurm=PREFIX --with-slurm-src=DIR)",
		    plugin_type, h.self ? h.self : "?", built, host);
}
