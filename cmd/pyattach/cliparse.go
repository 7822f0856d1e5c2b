package main

import (
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
)

// fastCommands are the commands run often enough (resolve before every
// debugger start, dump in loops, gdb and lldb, the hook a project's
// .gdbinit runs) that kong builds their model alone: reflecting over all
// of CLI costs milliseconds, more than resolve's own work. None of them
// reads kong's model (help, man and completion do).
var fastCommands = map[string]bool{"resolve": true, "dump": true, "debuginfo": true, "gdb": true, "lldb": true, "__hook": true}

// parseArgs builds kong's model of cli and parses args into cli. A
// command line whose first word that is not a flag names one of
// fastCommands, and asks for no help, is parsed with a model of that
// command and the global flags alone (oneCommand); what that model
// cannot parse is parsed again with the whole model, so that errors,
// suggestions and help are always the whole model's. Both parse the
// global flags the same way, so a line that parses with the small model
// means there what it means with the whole one.
func parseArgs(cli *CLI, args []string, opts []kong.Option) (*kong.Context, error) {
	if name := firstWord(args); fastCommands[name] && !asksHelp(args) {
		if one, ok := oneCommand(name); ok {
			if parser, err := kong.New(one.Interface(), opts...); err == nil {
				parser.Model.Help = description
				if kctx, err := parser.Parse(args); err == nil {
					// The command's values, and the globals, where Main
					// reads them.
					copyFields(reflect.ValueOf(cli).Elem(), one.Elem())
					return kctx, nil
				}
			}
		}
	}
	parser, err := kong.New(cli, opts...)
	if err != nil {
		return nil, modelError{err}
	}
	parser.Model.Help = description
	return parser.Parse(args)
}

// modelError is kong's refusal of the command model: a bug, not the
// user's command line.
type modelError struct{ error }

func (e modelError) Unwrap() error { return e.error }

// firstWord is the first argument that is not a flag.
func firstWord(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// asksHelp reports a -h or --help before the command's own arguments
// could hide one (gdb's and lldb's are theirs, but the whole model
// decides that).
func asksHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			return true
		}
	}
	return false
}

// commandName is the name kong gives the command field f.
func commandName(f reflect.StructField) string {
	if n := f.Tag.Get("name"); n != "" {
		return n
	}
	return strings.ToLower(f.Name)
}

// oneCommand is a new value of a struct type like CLI with the command
// named name as its only command: the global flags (an embed field),
// --version, and that command's field with its tags.
func oneCommand(name string) (reflect.Value, bool) {
	t := reflect.TypeOf(CLI{})
	var fields []reflect.StructField
	found := false
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch _, isCmd := f.Tag.Lookup("cmd"); {
		case f.Anonymous:
			f.Anonymous = false
			f.Tag = `embed:""`
		case !isCmd:
		case commandName(f) == name:
			found = true
		default:
			continue
		}
		f.Index, f.Offset = nil, 0
		fields = append(fields, f)
	}
	if !found {
		return reflect.Value{}, false
	}
	return reflect.New(reflect.StructOf(fields)), true
}

// copyFields sets each field of dst to src's field of the same name.
func copyFields(dst, src reflect.Value) {
	for i := 0; i < src.NumField(); i++ {
		dst.FieldByName(src.Type().Field(i).Name).Set(src.Field(i))
	}
}
