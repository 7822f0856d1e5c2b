package initfiles

import (
	"encoding/json"
	"reflect"
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
