package srcmap

import (
	"os"
	"path"
	"sort"
	"strings"
)

// Rule rewrites source paths under From to To (gdb substitute-path, lldb
// target.source-map), verified: Resolved of the Total missing files it
// applies to exist once rewritten.
type Rule struct {
	From, To        string
	Resolved, Total int
}

// Unresolved is a group none of whose files any rule resolves.
type Unresolved struct {
	Prefix, Layout string
	// Files is the number of missing files in the group.
	Files int
	// Hint says what source tree would resolve it, and how to give it.
	Hint string
}

// Bounds on the work Infer does per group.
const (
	maxRulesPerGroup = 8
	maxCandidates    = 16
	maxHits          = 32
)

// Infer finds, for each group, the prefix rules that make its files
// exist under the roots (see the package documentation), and describes
// the groups no rule resolves. Each rule's counts are taken over all the
// groups' files, with the rules applied as a debugger applies them (the
// most specific From wins). Rules resolving no file are dropped. Rules
// come most specific first, then by From and To; unresolved groups by
// Prefix. A nil exists means FileExists.
func Infer(groups []Group, roots []Root, idx Index, exists func(string) bool) ([]Rule, []Unresolved) {
	if exists == nil {
		exists = FileExists
	}
	ex := memoExists(exists)
	rs := cleanRoots(roots)
	gs := append([]Group(nil), groups...)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Prefix < gs[j].Prefix })

	var rules []Rule
	from := map[string]bool{}
	if idx != nil {
		for _, g := range gs {
			for _, r := range inferGroup(g, rs, idx, ex) {
				if !from[r.From] {
					from[r.From] = true
					rules = append(rules, Rule{From: r.From, To: r.To})
				}
			}
		}
	}

	var all []fileRef
	seen := map[string]bool{}
	for _, g := range gs {
		for _, f := range g.Files {
			if !seen[f] {
				seen[f] = true
				all = append(all, newFileRef(f))
			}
		}
	}
	sortRules(rules)
	var ev evalResult
	for {
		ev = evaluate(all, rules, ex)
		kept := rules[:0]
		for _, r := range ev.rules {
			if r.Resolved > 0 {
				kept = append(kept, r)
			}
		}
		if len(kept) == len(ev.rules) {
			rules = kept
			break
		}
		rules = kept
	}
	resolved := map[string]bool{}
	for i, f := range all {
		if ev.ok[i] {
			resolved[f.raw] = true
		}
	}
	var unres []Unresolved
	for _, g := range gs {
		any := false
		for _, f := range g.Files {
			if resolved[f] {
				any = true
				break
			}
		}
		if !any && len(g.Files) > 0 {
			unres = append(unres, Unresolved{Prefix: g.Prefix, Layout: g.Layout, Files: countUnique(g.Files), Hint: Hint(g)})
		}
	}
	return rules, unres
}

func countUnique(s []string) int {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return len(m)
}

// sortRules orders rules most specific first: a rule whose From lies
// under another's comes before it, since debuggers apply the first rule
// that matches. Otherwise the order is by From, then To.
func sortRules(rules []Rule) {
	// Ending each From with a byte above any in a path puts
	// "/a/b" (whose byte after "/a" is '/') before "/a".
	key := func(r Rule) string { return r.From + "\xff" }
	sort.SliceStable(rules, func(i, j int) bool {
		ki, kj := key(rules[i]), key(rules[j])
		if ki != kj {
			return ki < kj
		}
		return rules[i].To < rules[j].To
	})
}

type root struct {
	name, dir string
}

func cleanRoots(roots []Root) []root {
	var out []root
	for _, r := range roots {
		d, err := absDir(r.Dir)
		if err != nil {
			continue
		}
		out = append(out, root{name: r.Name, dir: d})
	}
	return out
}

func memoExists(exists func(string) bool) func(string) bool {
	m := map[string]bool{}
	return func(p string) bool {
		v, ok := m[p]
		if !ok {
			v = exists(p)
			m[p] = v
		}
		return v
	}
}

// fileRef is a missing file as recorded, and with ".." cleaned away the
// way lldb does before it maps paths.
type fileRef struct {
	raw, clean string
	dotdot     bool
}

func newFileRef(p string) fileRef {
	f := fileRef{raw: p, clean: p}
	if hasDotDot(strings.Split(p, "/")) {
		f.dotdot = true
		f.clean = path.Clean(p)
	}
	return f
}

// under returns p relative to the directory prefix dir.
func under(p, dir string) (string, bool) {
	switch {
	case p == dir:
		return "", true
	case dir == "/":
		return strings.TrimPrefix(p, "/"), strings.HasPrefix(p, "/")
	case strings.HasPrefix(p, dir) && p[len(dir)] == '/':
		return p[len(dir)+1:], true
	}
	return "", false
}

// apply rewrites p by a rule, keeping ".." as it is.
func apply(r Rule, p string) string {
	rel, _ := under(p, r.From)
	return joinPath(r.To, rel)
}

// bestRule is the index of the rule with the longest From above p, -1
// when none.
func bestRule(rules []Rule, p string) int {
	best := -1
	for i, r := range rules {
		if _, ok := under(p, r.From); ok && (best < 0 || len(r.From) > len(rules[best].From)) {
			best = i
		}
	}
	return best
}

type score struct {
	raw, any int // files resolved as recorded (gdb), and in either form
}

func (s score) better(t score) bool {
	return s.raw > t.raw || (s.raw == t.raw && s.any > t.any)
}

type evalResult struct {
	rules []Rule // with counts
	ok    []bool // per file: resolved in either form
	rawOK []bool // per file: resolved as recorded
	score score
}

// evaluate applies rules to files as a debugger would: the raw path by
// the most specific rule, and for a path with "..", the cleaned path too
// (lldb cleans before mapping). A rule counts a file once, resolved when
// either form it applies to exists.
func evaluate(files []fileRef, rules []Rule, ex func(string) bool) evalResult {
	res := evalResult{rules: make([]Rule, len(rules)), ok: make([]bool, len(files)), rawOK: make([]bool, len(files))}
	for i, r := range rules {
		res.rules[i] = Rule{From: r.From, To: r.To}
	}
	for i, f := range files {
		ri := bestRule(rules, f.raw)
		rawOK := ri >= 0 && ex(apply(rules[ri], f.raw))
		if ri >= 0 {
			res.rules[ri].Total++
			if rawOK {
				res.rules[ri].Resolved++
			}
		}
		ok := rawOK
		if f.dotdot {
			ci := bestRule(rules, f.clean)
			if ci >= 0 {
				cleanOK := ex(apply(rules[ci], f.clean))
				switch {
				case ci != ri:
					res.rules[ci].Total++
					if cleanOK {
						res.rules[ci].Resolved++
					}
				case cleanOK && !rawOK:
					res.rules[ci].Resolved++
				}
				ok = ok || cleanOK
			}
		}
		res.ok[i], res.rawOK[i] = ok, rawOK
		if rawOK {
			res.score.raw++
		}
		if ok {
			res.score.any++
		}
	}
	return res
}

// candidate is a mapping suggested by matching file suffixes: one rule,
// or for a path with "..", a pair (see pairRules).
type candidate struct {
	key   string
	votes int
	// A single rule.
	from, to string
	// A pair: x (the raw directory before "..", e.g. <tree>/build-static)
	// and pc (where it climbs back to, <tree>) onto local dir l.
	pair      bool
	x, pc, l  string
	naive     string          // l joined with x's components below pc
	evidence  map[string]bool // existing directories at x's depth under l
	sampleRel string          // a raw path relative to x, for choosing the target
}

// rules turns a candidate into rules. A pair maps x onto the first of
// its naive target and the evidence directories through which a sample
// path resolves, and pc onto l.
func (c *candidate) rules(ex func(string) bool) []Rule {
	if !c.pair {
		return []Rule{{From: c.from, To: c.to}}
	}
	tree := Rule{From: c.pc, To: c.l}
	targets := []string{c.naive}
	ev := make([]string, 0, len(c.evidence))
	for d := range c.evidence {
		if d != c.naive {
			ev = append(ev, d)
		}
	}
	sort.Strings(ev)
	targets = append(targets, ev...)
	for i, t := range targets {
		if i > maxCandidates {
			break
		}
		if st, err := os.Stat(t); err != nil || !st.IsDir() {
			continue
		}
		if ex(joinPath(t, c.sampleRel)) {
			return []Rule{{From: c.x, To: t}, tree}
		}
	}
	return []Rule{tree}
}

// phaseRoots are the roots tried for a group, in turn: roots named like
// it, unnamed roots, and for a group of unknown name, roots named
// otherwise.
func phaseRoots(g Group, roots []root) [][]root {
	var named, unnamed, other []root
	for _, r := range roots {
		switch {
		case r.name == "":
			unnamed = append(unnamed, r)
		case nameMatches(r.name, g):
			named = append(named, r)
		default:
			other = append(other, r)
		}
	}
	out := [][]root{named, unnamed}
	if g.Name == "" {
		out = append(out, other)
	}
	return out
}

// nameMatches reports whether a root's name names the group.
func nameMatches(name string, g Group) bool {
	base := path.Base(g.Prefix)
	n, _ := splitNameVersion(base)
	alias := []string{g.Name, base, n, strings.TrimSuffix(base, "-src")}
	if g.Name == NameCPython {
		alias = append(alias, "python", "python3", "cpython")
	}
	for _, a := range alias {
		if a != "" && strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// inferGroup chooses rules for one group greedily.
func inferGroup(g Group, roots []root, idx Index, ex func(string) bool) []Rule {
	files := make([]fileRef, 0, len(g.Files))
	seen := map[string]bool{}
	for _, f := range g.Files {
		if !seen[f] {
			seen[f] = true
			files = append(files, newFileRef(f))
		}
	}
	var rules []Rule
	for _, rs := range phaseRoots(g, roots) {
		if len(rs) == 0 {
			continue
		}
		// The candidates each file suggests do not depend on the rules.
		sugg := make([][]*candidate, len(files))
		byKey := map[string]*candidate{}
		for i, f := range files {
			sugg[i] = suggest(g.Prefix, f, rs, idx, byKey)
		}
		for len(rules) < maxRulesPerGroup {
			cur := evaluate(files, rules, ex)
			votes := map[*candidate]int{}
			for i := range files {
				if cur.rawOK[i] {
					continue
				}
				for _, c := range sugg[i] {
					votes[c]++
				}
			}
			cands := make([]*candidate, 0, len(votes))
			for c, v := range votes {
				c.votes = v
				cands = append(cands, c)
			}
			sort.Slice(cands, func(i, j int) bool {
				if cands[i].votes != cands[j].votes {
					return cands[i].votes > cands[j].votes
				}
				return cands[i].key < cands[j].key
			})
			if len(cands) > maxCandidates {
				cands = cands[:maxCandidates]
			}
			var best []Rule
			bestScore := cur.score
			for _, c := range cands {
				trial := addRules(rules, c.rules(ex))
				if len(trial) == len(rules) {
					continue
				}
				if s := evaluate(files, trial, ex).score; s.better(bestScore) {
					best, bestScore = trial, s
				}
			}
			if best == nil {
				break
			}
			rules = best
		}
	}
	return rules
}

// addRules returns rules plus those of add whose From is new.
func addRules(rules, add []Rule) []Rule {
	out := append([]Rule(nil), rules...)
	for _, a := range add {
		dup := false
		for _, r := range out {
			if r.From == a.From {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}

// suggest lists the candidates one file supports, registering them in
// byKey so that files supporting the same mapping share one.
func suggest(prefix string, f fileRef, roots []root, idx Index, byKey map[string]*candidate) []*candidate {
	rel, ok := under(f.raw, prefix)
	if !ok || rel == "" {
		return nil
	}
	comps := strings.Split(rel, "/")
	first := indexOf(comps, "..")
	if first < 0 {
		return singles(prefix, comps, roots, idx, byKey)
	}
	// <prefix>/d1/.../dj/../..(n times)/tail, with n <= j and no ".."
	// in tail: the pair form.
	n := 0
	for first+n < len(comps) && comps[first+n] == ".." {
		n++
	}
	tail := comps[first+n:]
	if n <= first && len(tail) > 0 && allPlain(comps[:first]) && allPlain(tail) {
		s, hits := longest(tail, roots, idx)
		if s == 0 && len(hits) > 0 {
			x := joinPath(prefix, strings.Join(comps[:first], "/"))
			pc := joinPath(prefix, strings.Join(comps[:first-n], "/"))
			sampleRel := strings.Join(comps[first:], "/")
			below := strings.Join(comps[first-n:first], "/")
			var out []*candidate
			for _, h := range hits {
				l := trimComps(h, len(tail))
				key := "pair\x00" + x + "\x00" + pc + "\x00" + l
				c := byKey[key]
				if c == nil {
					c = &candidate{key: key, pair: true, x: x, pc: pc, l: l, naive: joinPath(l, below), evidence: map[string]bool{}, sampleRel: sampleRel}
					byKey[key] = c
				}
				if len(tail)-1 >= n {
					c.evidence[joinPath(l, strings.Join(tail[:n], "/"))] = true
				}
				out = append(out, c)
			}
			return out
		}
	}
	// Otherwise only the cleaned path can be mapped.
	crel, ok := under(f.clean, prefix)
	if !ok || crel == "" {
		return nil
	}
	cc := strings.Split(crel, "/")
	if hasDotDot(cc) {
		return nil
	}
	return singles(prefix, cc, roots, idx, byKey)
}

// singles are the one-rule candidates for a path <prefix>/<comps...>.
func singles(prefix string, comps []string, roots []root, idx Index, byKey map[string]*candidate) []*candidate {
	s, hits := longest(comps, roots, idx)
	var out []*candidate
	// "<prefix>/./Include/x.h": map <prefix>, not "<prefix>/.".
	head := comps[:s]
	for len(head) > 0 && (head[len(head)-1] == "." || head[len(head)-1] == "") {
		head = head[:len(head)-1]
	}
	from := joinPath(prefix, strings.Join(head, "/"))
	for _, h := range hits {
		to := trimComps(h, len(comps)-s)
		key := "rule\x00" + from + "\x00" + to
		c := byKey[key]
		if c == nil {
			c = &candidate{key: key, from: from, to: to}
			byKey[key] = c
		}
		out = append(out, c)
	}
	return out
}

// longest finds the longest suffix comps[s:] naming files under roots,
// and those files (at most maxHits).
func longest(comps []string, roots []root, idx Index) (int, []string) {
	for s := 0; s < len(comps); s++ {
		if !plain(comps[s]) {
			continue
		}
		var hits []string
		for _, h := range idx.Lookup(strings.Join(comps[s:], "/")) {
			if inRoots(h, roots, len(comps)-s) {
				hits = append(hits, h)
			}
		}
		if len(hits) > 0 {
			sort.Strings(hits)
			hits = uniq(hits)
			if len(hits) > maxHits {
				hits = hits[:maxHits]
			}
			return s, hits
		}
	}
	return len(comps), nil
}

// inRoots reports whether h lies under one of roots with at least k
// components below it, so that a mapping never points above a root.
func inRoots(h string, roots []root, k int) bool {
	for _, r := range roots {
		if rel, ok := under(h, r.dir); ok && rel != "" && strings.Count(rel, "/")+1 >= k {
			return true
		}
	}
	return false
}

// trimComps removes the last k components of p.
func trimComps(p string, k int) string {
	for ; k > 0; k-- {
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			return "/"
		}
		p = p[:i]
	}
	return p
}

func allPlain(c []string) bool {
	for _, s := range c {
		if !plain(s) {
			return false
		}
	}
	return true
}
