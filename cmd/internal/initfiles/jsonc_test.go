package initfiles

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	in := `{
  // a comment with "quotes" and a trailing comma,
  "url": "http://example.invalid/a//b", /* block */
  "s": "a /* not a comment */ \" // still a string",
  "list": [1, 2, /* two */ ],
  "obj": {"k": "v",},
}`
	out, comments := StripJSONC([]byte(in))
	if !comments {
		t.Error("comments not reported")
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]any{
		"url":  "http://example.invalid/a//b",
		"s":    `a /* not a comment */ " // still a string`,
		"list": []any{1.0, 2.0},
		"obj":  map[string]any{"k": "v"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if _, c := StripJSONC([]byte(`{"a": "//x"}`)); c {
		t.Error("a // inside a string counted as a comment")
	}
}

func TestMergeJSONC(t *testing.T) {
	owned := func(raw []byte) bool {
		clean, _ := StripJSONC(raw)
		var m map[string]any
		return json.Unmarshal(clean, &m) == nil && m["name"] == "ours"
	}
	add := []any{map[string]any{"name": "ours", "n": 2}}
	names := func(t *testing.T, out []byte) []any {
		t.Helper()
		clean, _ := StripJSONC(out)
		var doc map[string]any
		if err := json.Unmarshal(clean, &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var got []any
		for _, c := range doc["configurations"].([]any) {
			got = append(got, c.(map[string]any)["name"])
		}
		return got
	}
	cases := []struct {
		name, in string
		want     []any
		keep     []string // text that must stay
	}{
		{"comments kept, ours replaced", `{
    // the user's own note
    "version": "0.2.0",
    "configurations": [
        /* first */ {"name": "mine", "url": "a//b"}, // after mine
        // about ours
        {"name": "ours", "n": 1},
        {"name": "theirs",}, // trailing comma kept
    ],
}`, []any{"mine", "theirs", "ours"}, []string{"// the user's own note", "/* first */", "// after mine", `"url": "a//b"`, "// trailing comma kept", `"theirs",}`}},
		{"ours last without comma", `{"configurations": [{"name": "a"}, {"name": "ours"}]}`, []any{"a", "ours"}, nil},
		{"empty list with a comment", "{\"configurations\": [ // none yet\n]}", []any{"ours"}, []string{"// none yet"}},
		{"no list", "{\n  // only a version\n  \"version\": \"0.2.0\"\n}", []any{"ours"}, []string{"// only a version"}},
		{"empty object", "{}", []any{"ours"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := MergeJSONC([]byte(c.in), "configurations", owned, add)
			if err != nil {
				t.Fatalf("%v\n%s", err, c.in)
			}
			if got := names(t, out); !reflect.DeepEqual(got, c.want) {
				t.Errorf("configurations %v, want %v:\n%s", got, c.want, out)
			}
			for _, k := range c.keep {
				if !strings.Contains(string(out), k) {
					t.Errorf("%q was not kept:\n%s", k, out)
				}
			}
			if strings.Contains(string(out), `"n": 1`) {
				t.Errorf("the old entry of ours is still there:\n%s", out)
			}
			// Merging again changes nothing.
			again, err := MergeJSONC(out, "configurations", owned, add)
			if err != nil || string(again) != string(out) {
				t.Errorf("second merge differs (%v):\n%s\n---\n%s", err, out, again)
			}
		})
	}
	for _, bad := range []string{`[]`, `{"configurations": [1,,2]}`, `{"configurations": [`, `{"a" 1}`, `{"configurations": {"x": 1}`} {
		if _, err := MergeJSONC([]byte(bad), "configurations", owned, add); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzMergeJSONC: any text gives an error or JSONC whose configurations
// end with the added one, never a panic.
func FuzzMergeJSONC(f *testing.F) {
	for _, s := range []string{`{}`, `{"configurations": []}`, "{\"configurations\": [{\"name\": \"x\"}, // c\n]}",
		`{"a": [1, {"b": "]"}], "configurations": [ /* x */ {"name": "ours"},],}`, `{"configurations": "no"}`} {
		f.Add(s)
	}
	owned := func(raw []byte) bool { return strings.Contains(string(raw), "ours") }
	add := []any{map[string]any{"name": "ours"}}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := MergeJSONC([]byte(in), "configurations", owned, add)
		if err != nil {
			return
		}
		clean, _ := StripJSONC(out)
		var doc map[string]any
		if err := json.Unmarshal(clean, &doc); err != nil {
			t.Fatalf("%q gave %q: %v", in, out, err)
		}
		c, ok := doc["configurations"].([]any)
		if !ok || len(c) == 0 || !reflect.DeepEqual(c[len(c)-1], add[0]) {
			// A duplicate key: encoding/json keeps the last, MergeJSONC
			// edits the first.
			if strings.Count(in, `"configurations"`) > 1 {
				return
			}
			t.Fatalf("%q gave %q: no added configuration last", in, out)
		}
	})
}
