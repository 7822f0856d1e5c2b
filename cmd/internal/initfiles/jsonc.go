package initfiles

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
