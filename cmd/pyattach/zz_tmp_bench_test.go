package main

import (
	"testing"

	"github.com/alecthomas/kong"
)

func BenchmarkKongNew(b *testing.B) {
	for b.Loop() {
		var cli CLI
		p, err := kong.New(&cli, append(rawArgOptions(), kong.Name("pyattach"), kong.Vars{"version": versionLine()})...)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Parse([]string{"resolve", "123"}); err != nil {
			b.Fatal(err)
		}
	}
}
