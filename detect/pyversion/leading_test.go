package pyversion

import "testing"

func TestLeading(t *testing.T) {
	for in, want := range map[string]string{
		"3.12.1":                  "3.12.1",
		"3.12.1-1.fc39.x86_64":    "3.12.1",
		"3.13.0rc1+":              "3.13.0rc1",
		"3.13.0t":                 "3.13.0",
		"2.7.18~deb":              "2.7.18",
		"3.10.14_1":               "3.10.14",
		"3.12":                    "",
		"4.0.0":                   "",
		"3.1234.0":                "",
		"3.12.1x":                 "",
		"cpython-3.12.1":          "",
		"3.12.1-linux-x86_64-gnu": "3.12.1",
		"3.12.1a":                 "",
		"3.14.0b2.linux":          "3.14.0b2",
	} {
		if got := Leading(in); got != want {
			t.Errorf("Leading(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSortFlags(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"dt", "td", true},
		{"md", "dm", true},
		{"dd", "", false},
		{"x", "", false},
		{"tdmux", "", false},
	} {
		got, ok := SortFlags(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("SortFlags(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
