package debuginfod

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// FuzzParseURLs checks the DEBUGINFOD_URLS parser: every URL it keeps is
// one fetchable http, https or file URL without white space, no two are
// the same server, nothing is lost, and parsing its own output again
// changes nothing.
func FuzzParseURLs(f *testing.F) {
	for _, s := range []string{
		"https://debuginfod.debian.net",
		"http://127.0.0.1:8002 http://127.0.0.1:8003/",
		"  http://a/d1 http://a/d1 http://a/d1/ ",
		"127.0.0.1:8002\tftp://x\nfile:///srv/debuginfod",
		"http://a,http://b",
		"http://[::1]:8002/ https://user:pw@host/path// http://a?x#y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		urls, ignored := ParseURLs(s)
		if n := len(strings.Fields(s)); len(urls)+len(ignored) > n {
			t.Fatalf("%d URLs and %d ignored from %d fields", len(urls), len(ignored), n)
		}
		seen := map[string]bool{}
		for _, u := range urls {
			if strings.ContainsFunc(u, unicode.IsSpace) || u == "" {
				t.Fatalf("URL %q holds white space", u)
			}
			p, err := url.Parse(u)
			if err != nil {
				t.Fatalf("kept %q: %v", u, err)
			}
			switch strings.ToLower(p.Scheme) {
			case "http", "https", "file":
			default:
				t.Fatalf("kept %q: scheme %q", u, p.Scheme)
			}
			key := strings.TrimSuffix(u, "/")
			if seen[key] {
				t.Fatalf("kept %q twice", u)
			}
			seen[key] = true
			if r := requestURL(u, "ab", "debuginfo"); !strings.HasSuffix(r, "/buildid/ab/debuginfo") {
				t.Fatalf("request URL %q", r)
			}
		}
		again, ignoredAgain := ParseURLs(strings.Join(urls, " "))
		if !reflect.DeepEqual(again, urls) || len(ignoredAgain) != 0 {
			t.Fatalf("ParseURLs(%q) = %q, %q; again: %q, %q", s, urls, ignored, again, ignoredAgain)
		}
	})
}
