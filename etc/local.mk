# Example configuration, installed into $(datadir)/idletime.
dist_idletimeetc_DATA += etc/idletime.json etc/demo.json
