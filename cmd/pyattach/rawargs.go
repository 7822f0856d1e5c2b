package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"github.com/alecthomas/kong"
)

// rawArgOptions makes kong keep every string argument byte for byte.
// kong's own string, "path" and "existingfile" mappers copy a value
// through a JSON round trip, which silently turns bytes that are not
// UTF-8 (legal in Linux file names) into U+FFFD: a --debug-dir, a target
// or a debugger argument would then name another file.
func rawArgOptions() []kong.Option {
	// kong's slice decoder, for slices of paths, looked up in a registry
	// whose element mappers are the ones below.
	reg := kong.NewRegistry().RegisterDefaults()
	str := kong.MapperFunc(decodeRawString)
	path := kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
		return decodeRawPath(reg, ctx, target, false)
	})
	existing := kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
		return decodeRawPath(reg, ctx, target, true)
	})
	reg.RegisterKind(reflect.String, str).RegisterName("path", path).RegisterName("existingfile", existing)
	return []kong.Option{
		kong.KindMapper(reflect.String, str),
		kong.NamedMapper("path", path),
		kong.NamedMapper("existingfile", existing),
	}
}

// popRawString pops the next value as a string, unchanged when it is
// one (command line, environment); other values (none today) are
// converted as kong does.
func popRawString(ctx *kong.DecodeContext, what string) (string, error) {
	t, err := ctx.Scan.PopValue(what)
	if err != nil {
		return "", err
	}
	if s, ok := t.Value.(string); ok {
		return s, nil
	}
	var s string
	b, err := json.Marshal(t.Value)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return "", fmt.Errorf("expected a string but got %v (%T)", t.Value, t.Value)
	}
	return s, nil
}

func decodeRawString(ctx *kong.DecodeContext, target reflect.Value) error {
	s, err := popRawString(ctx, "string")
	if err != nil {
		return err
	}
	target.SetString(s)
	return nil
}

// decodeRawPath is kong's "path" (and "existingfile") mapper without the
// JSON round trip: "~/" and relative paths are made absolute with
// kong.ExpandPath, "-" stays as it is.
func decodeRawPath(reg *kong.Registry, ctx *kong.DecodeContext, target reflect.Value, existing bool) error {
	if target.Kind() == reflect.Slice {
		return reg.ForType(target.Type()).Decode(ctx, target)
	}
	if target.Kind() != reflect.String {
		return fmt.Errorf("a path must be a string, not %s", target.Type())
	}
	p, err := popRawString(ctx, "file")
	if err != nil {
		return err
	}
	if ctx.Value.HasDefault && p == "" {
		return nil
	}
	if existing && (!ctx.Value.Active || (ctx.Value.Set && ctx.Value.Target.Type() == target.Type())) {
		return nil
	}
	if p != "-" {
		p = kong.ExpandPath(p)
		if existing {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			if st.IsDir() {
				return fmt.Errorf("%q exists but is a directory", p)
			}
		}
	}
	target.SetString(p)
	return nil
}
