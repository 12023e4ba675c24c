touch "$marker"
ctx logger info "marker written"
