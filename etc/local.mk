# Example configuration, installed into $(datadir)/idletime.
dist_idletimeetc_DATA += etc/idletime.json etc/demo.json etc/prometheus-idletime.yml etc/idletime-exporter.default
