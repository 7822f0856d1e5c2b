package testenv

import "testing"

// Cases calls f on each key of cases and reports each result that is not
// the key's value, as "name(key) = got, want value".
func Cases[K, V comparable](t testing.TB, name string, f func(K) V, cases map[K]V) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%#v) = %#v, want %#v", name, in, got, want)
		}
	}
}
