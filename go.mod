module github.com/pyattach/pyattach

go 1.25.0

require (
	github.com/BurntSushi/toml v1.5.0
	github.com/adrg/xdg v0.5.3
	github.com/alecthomas/kong v1.17.0
	github.com/rogpeppe/go-internal v1.16.0
)

require (
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
