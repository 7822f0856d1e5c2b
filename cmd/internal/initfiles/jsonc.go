package initfiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// StripJSONC removes // and /* */ comments and trailing commas outside
// strings, and reports whether there were comments.
func StripJSONC(b []byte) ([]byte, bool) {
	noComments, comments := removeJSONComments(b)
	return removeTrailingCommas(noComments), comments
}

// scanJSON calls f for every byte outside JSON strings; f returns how
// many bytes it consumed (0 to copy the byte as it is) and what to write.
func scanJSON(b []byte, f func(i int) (int, []byte)) []byte {
	var out []byte
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		if n, repl := f(i); n > 0 {
			out = append(out, repl...)
			i += n - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

func removeJSONComments(b []byte) ([]byte, bool) {
	comments := false
	out := scanJSON(b, func(i int) (int, []byte) {
		if b[i] != '/' || i+1 >= len(b) {
			return 0, nil
		}
		switch b[i+1] {
		case '/':
			comments = true
			j := i
			for j < len(b) && b[j] != '\n' {
				j++
			}
			return j - i, nil
		case '*':
			comments = true
			j := i + 2
			for j+1 < len(b) && !(b[j] == '*' && b[j+1] == '/') {
				j++
			}
			return min(j+2, len(b)) - i, []byte(" ")
		}
		return 0, nil
	})
	return out, comments
}

func removeTrailingCommas(b []byte) []byte {
	return scanJSON(b, func(i int) (int, []byte) {
		if b[i] != ',' {
			return 0, nil
		}
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
			j++
		}
		if j < len(b) && (b[j] == ']' || b[j] == '}') {
			return 1, nil
		}
		return 0, nil
	})
}

// MergeJSONC edits the JSONC text b, whose value is an object, in place:
// in its member key (an array, added when missing) it drops the elements
// for which drop(element's text) is true and appends add, each written as
// indented JSON. Comments, trailing commas and the rest of the text stay
// as they were, but for the comments just before a dropped element. The
// result is checked to be JSONC again.
func MergeJSONC(b []byte, key string, drop func([]byte) bool, add []any) ([]byte, error) {
	p := &jsoncScanner{b: b}
	p.space()
	if p.i >= len(b) || b[p.i] != '{' {
		return nil, p.fail("the file is not an object")
	}
	objOpen := p.i
	p.i++
	var arr *jsoncArray
	objClose := -1
	members := 0
	for {
		p.space()
		if p.i < len(b) && b[p.i] == '}' {
			objClose = p.i
			break
		}
		if p.i >= len(b) || b[p.i] != '"' {
			return nil, p.fail("a member name was expected")
		}
		nameStart := p.i
		if err := p.value(); err != nil {
			return nil, err
		}
		var name string
		if err := json.Unmarshal(b[nameStart:p.i], &name); err != nil {
			return nil, p.fail("bad member name")
		}
		p.space()
		if p.i >= len(b) || b[p.i] != ':' {
			return nil, p.fail("':' was expected")
		}
		p.i++
		p.space()
		members++
		if name == key && arr == nil {
			a, err := p.array()
			if err != nil {
				return nil, err
			}
			arr = a
		} else if err := p.value(); err != nil {
			return nil, err
		}
		p.space()
		if p.i < len(b) && b[p.i] == ',' {
			p.i++
			continue
		}
		p.space()
		if p.i < len(b) && b[p.i] == '}' {
			objClose = p.i
			break
		}
		return nil, p.fail("',' or '}' was expected")
	}
	_ = objClose

	var out []byte
	if arr == nil {
		// No such member: add one first in the object.
		out = append(out, b[:objOpen+1]...)
		out = append(out, "\n  \""...)
		out = append(out, key...)
		out = append(out, "\": ["...)
		out = appendElems(out, add, "    ", false)
		out = append(out, "\n  ]"...)
		if members > 0 {
			out = append(out, ',')
		}
		out = append(out, b[objOpen+1:]...)
	} else {
		out = append(out, b[:arr.open+1]...)
		var kept []jsoncElem
		for _, e := range arr.elems {
			if !drop(b[e.start:e.end]) {
				kept = append(kept, e)
			}
		}
		indent := "    "
		for i, e := range kept {
			lead := b[e.lead:e.start]
			if in := lastIndent(lead); in != "" {
				indent = in
			}
			out = append(out, lead...)
			out = append(out, b[e.start:e.comma]...)
			if i < len(kept)-1 || len(add) > 0 || e.comma < e.after {
				out = append(out, ',')
			}
			if e.comma < e.after {
				out = append(out, b[e.comma+1:e.after]...)
			}
		}
		out = appendElems(out, add, indent, false)
		tail := b[arr.tail:arr.close]
		if len(arr.elems) == 0 {
			tail = b[arr.open+1 : arr.close]
		}
		if len(add) > 0 && !hasNewline(tail) {
			tail = append([]byte("\n"+strings.TrimSuffix(indent, "  ")), tail...)
		}
		out = append(out, tail...)
		out = append(out, b[arr.close:]...)
	}
	clean, _ := StripJSONC(out)
	var v any
	if err := json.Unmarshal(clean, &v); err != nil {
		return nil, fmt.Errorf("merged text is not JSON: %w", err)
	}
	return out, nil
}

func appendElems(out []byte, add []any, indent string, comma bool) []byte {
	// VS Code writes launch.json with 4 spaces a level.
	unit := "  "
	if len(indent) >= 8 && len(indent)%4 == 0 && strings.Trim(indent, " ") == "" {
		unit = "    "
	}
	for _, a := range add {
		text, err := json.MarshalIndent(a, indent, unit)
		if err != nil {
			continue
		}
		if comma {
			out = append(out, ',')
		}
		comma = true
		out = append(out, '\n')
		out = append(out, indent...)
		out = append(out, text...)
	}
	return out
}

// lastIndent is the spaces and tabs that end s after its last newline,
// "" when s has none.
func lastIndent(s []byte) string {
	i := bytes.LastIndexByte(s, '\n')
	if i < 0 {
		return ""
	}
	rest := s[i+1:]
	if len(bytes.Trim(rest, " \t")) != 0 {
		return ""
	}
	return string(rest)
}

func hasNewline(s []byte) bool { return bytes.IndexByte(s, '\n') >= 0 }

// jsoncArray is where an array and its elements are in the text.
type jsoncArray struct {
	open, close int // the brackets
	elems       []jsoncElem
	tail        int // after the last element's comma, or its end
}

// jsoncElem: lead is where the text before the element starts (after
// the previous element's), start/end the element, comma where its comma
// is (end when it has none), after the end of the comma and the comment
// that follows it on its line (comma when it has no comma).
type jsoncElem struct{ lead, start, end, comma, after int }

type jsoncScanner struct {
	b []byte
	i int
}

func (p *jsoncScanner) fail(what string) error {
	line := 1 + bytes.Count(p.b[:min(p.i, len(p.b))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, what)
}

// space skips white space and comments.
func (p *jsoncScanner) space() {
	b := p.b
	for p.i < len(b) {
		switch c := b[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(b) && b[p.i+1] == '/':
			for p.i < len(b) && b[p.i] != '\n' {
				p.i++
			}
		case c == '/' && p.i+1 < len(b) && b[p.i+1] == '*':
			j := bytes.Index(b[p.i+2:], []byte("*/"))
			if j < 0 {
				p.i = len(b)
				return
			}
			p.i += j + 4
		default:
			return
		}
	}
}

// sameLine is where the blanks and a // comment after p.i on its line
// end (p.i when there is no comment); p.i is not moved.
func (p *jsoncScanner) sameLine() int {
	b := p.b
	j := p.i
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	if j+1 < len(b) && b[j] == '/' && b[j+1] == '/' {
		for j < len(b) && b[j] != '\n' {
			j++
		}
		return j
	}
	return p.i
}

// value skips one value (no white space before it).
func (p *jsoncScanner) value() error {
	b := p.b
	if p.i >= len(b) {
		return p.fail("a value was expected")
	}
	switch b[p.i] {
	case '"':
		p.i++
		for p.i < len(b) {
			switch b[p.i] {
			case '\\':
				p.i += 2
				continue
			case '"':
				p.i++
				return nil
			}
			p.i++
		}
		return p.fail("a string does not end")
	case '{', '[':
		open, closing := b[p.i], byte('}')
		if open == '[' {
			closing = ']'
		}
		p.i++
		for {
			p.space()
			if p.i >= len(b) {
				return p.fail("a bracket is not closed")
			}
			if b[p.i] == closing {
				p.i++
				return nil
			}
			if b[p.i] == ',' || b[p.i] == ':' {
				p.i++
				continue
			}
			if err := p.value(); err != nil {
				return err
			}
		}
	default:
		start := p.i
		for p.i < len(b) && !strings.ContainsRune(" \t\r\n,:]}/", rune(b[p.i])) {
			p.i++
		}
		if p.i == start {
			return p.fail("a value was expected")
		}
		return nil
	}
}

// array reads an array, recording its elements.
func (p *jsoncScanner) array() (*jsoncArray, error) {
	b := p.b
	if p.i >= len(b) || b[p.i] != '[' {
		return nil, p.fail("an array was expected")
	}
	a := &jsoncArray{open: p.i}
	p.i++
	lead := p.i
	for {
		p.space()
		if p.i >= len(b) {
			return nil, p.fail("an array is not closed")
		}
		if b[p.i] == ']' {
			a.close = p.i
			if a.tail == 0 {
				a.tail = lead
			}
			p.i++
			return a, nil
		}
		e := jsoncElem{lead: lead, start: p.i}
		if err := p.value(); err != nil {
			return nil, err
		}
		e.end = p.i
		p.space()
		switch {
		case p.i < len(b) && b[p.i] == ',':
			e.comma = p.i
			p.i++
			e.after = p.sameLine()
			lead = e.after
		case p.i < len(b) && b[p.i] == ']':
			e.comma, e.after = e.end, e.end
			lead = e.end
		default:
			return nil, p.fail("',' or ']' was expected")
		}
		a.elems = append(a.elems, e)
		a.tail = lead
	}
}
