package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
)

// writeJSON prints v as indented JSON for a --json flag. JSON strings are
// Unicode: encoding/json would silently write a file name holding bytes
// that are not UTF-8 (legal on Linux) with U+FFFD, naming another file,
// so such a value is refused instead, and the text output carries it.
func writeJSON(w io.Writer, v any) error {
	if s, ok := findInvalidUTF8(reflect.ValueOf(v)); ok {
		return withHint(fmt.Errorf("--json: %q is not valid UTF-8, which JSON cannot carry", s),
			"run the same command without --json: its text output gives the bytes as they are")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Values keep their characters; the controls encoding/json leaves
	// raw are written as \u escapes.
	_, err := w.Write(safetext.EscapeJSON(buf.Bytes()))
	return err
}

// findInvalidUTF8 returns the first string in v, as encoding/json would
// visit it (exported fields, elements, map keys and values), that is not
// valid UTF-8.
func findInvalidUTF8(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			return s, true
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return findInvalidUTF8(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				if s, ok := findInvalidUTF8(v.Field(i)); ok {
					return s, true
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // base64 in JSON: exact
		}
		for i := 0; i < v.Len(); i++ {
			if s, ok := findInvalidUTF8(v.Index(i)); ok {
				return s, true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if s, ok := findInvalidUTF8(it.Key()); ok {
				return s, true
			}
			if s, ok := findInvalidUTF8(it.Value()); ok {
				return s, true
			}
		}
	}
	return "", false
}
