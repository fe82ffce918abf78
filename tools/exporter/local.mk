# tools/exporter: idletime-exporter, the Prometheus exporter (idletime-exporter(8)). The series are
# src/views/metrics.cpp (pure, unit-tested); this directory only reads libslurm and serves HTTP.
sbin_PROGRAMS += tools/exporter/idletime-exporter
tools_exporter_idletime_exporter_SOURCES = tools/exporter/exporter.cpp \
	tools/exporter/http_server.hpp tools/exporter/http_server.cpp \
	tools/exporter/textfile.hpp tools/exporter/textfile.cpp
tools_exporter_idletime_exporter_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
tools_exporter_idletime_exporter_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
tools_exporter_idletime_exporter_LDADD = $(views_tool_ldadd)
# The systemd unit goes in through debian/ (dh_installsystemd); the Grafana dashboard is data.
EXTRA_DIST += etc/idletime-exporter.service etc/idletime-exporter-textfile.service \
	etc/idletime-exporter-textfile.timer
idletimegrafanadir = $(datadir)/idletime/grafana
dist_idletimegrafana_DATA = etc/grafana/idletime-dashboard.json
