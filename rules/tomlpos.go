package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// posIndex maps the path of every key in the document ("rule", 2,
// "regex") to where its key and its value are, for messages that say
// file:line:col: go-toml's decoder does not keep positions, so the document
// is walked a second time with its low-level parser (buildIndex).
type posIndex struct {
	file string
	keys map[string]position
	vals map[string]position
}

type position struct{ line, col int }

func pathKey(parts ...any) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(0)
		}
		if n, ok := p.(int); ok {
			b.WriteByte('#')
			b.WriteString(strconv.Itoa(n))
		} else {
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

func (x *posIndex) has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := x.keys[pathKey(k)]; !ok {
			return false
		}
	}
	return true
}

// errorAt places msg at the value of path, or at its nearest ancestor
// that the file spells out.
func (x *posIndex) errorAt(path []any, msg string) *ConfigError {
	for n := len(path); n > 0; n-- {
		k := pathKey(path[:n]...)
		if p, ok := x.vals[k]; ok {
			return &ConfigError{File: x.file, Line: p.line, Col: p.col, Msg: msg}
		}
		if p, ok := x.keys[k]; ok {
			return &ConfigError{File: x.file, Line: p.line, Col: p.col, Msg: msg}
		}
	}
	return &ConfigError{File: x.file, Line: 1, Col: 1, Msg: msg}
}

// source is "file:line" of the table of an array item, for rule sources.
func (x *posIndex) source(name string, kind string, i int) string {
	k := pathKey(kind, i)
	p, ok := x.keys[k]
	if !ok {
		p, ok = x.vals[k]
	}
	if !ok {
		return name
	}
	return fmt.Sprintf("%s:%d", name, p.line)
}

// buildIndex walks the document with go-toml's parser, which keeps the
// byte range of every key and value. The decoder has already accepted the
// document, so a parse error here would be a bug in one of the two.
func buildIndex(name string, data []byte) (*posIndex, error) {
	x := &posIndex{file: name, keys: map[string]position{}, vals: map[string]position{}}
	var p unstable.Parser
	p.Reset(data)
	arrays := map[string]int{} // array-table path -> tables so far
	var table []any
	resolve := func(parts []string, arrayTable bool) []any {
		var path []any
		for i, part := range parts {
			path = append(path, part)
			if arrayTable && i == len(parts)-1 {
				break
			}
			if n, ok := arrays[pathKey(path...)]; ok {
				path = append(path, n-1)
			}
		}
		return path
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			parts, first := keyParts(e.Key())
			table = resolve(parts, false)
			x.keys[pathKey(table...)] = x.pos(&p, first)
		case unstable.ArrayTable:
			parts, first := keyParts(e.Key())
			base := resolve(parts, true)
			n := arrays[pathKey(base...)]
			arrays[pathKey(base...)] = n + 1
			x.keys[pathKey(base...)] = x.pos(&p, first)
			table = append(base, n)
			x.keys[pathKey(table...)] = x.pos(&p, first)
		case unstable.KeyValue:
			x.keyValue(&p, table, e)
		}
	}
	if err := p.Error(); err != nil {
		return nil, &ConfigError{File: name, Line: 1, Col: 1, Msg: err.Error()}
	}
	return x, nil
}

func (x *posIndex) keyValue(p *unstable.Parser, prefix []any, kv *unstable.Node) {
	parts, first := keyParts(kv.Key())
	path := slices.Clone(prefix)
	for _, part := range parts {
		path = append(path, part)
	}
	x.keys[pathKey(path...)] = x.pos(p, first)
	x.value(p, path, kv.Value())
}

func (x *posIndex) value(p *unstable.Parser, path []any, v *unstable.Node) {
	if v.Raw.Length > 0 {
		x.vals[pathKey(path...)] = x.pos(p, v)
	}
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				x.keyValue(p, path, n)
			}
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			elem := append(slices.Clone(path), i)
			x.keys[pathKey(elem...)] = x.pos(p, n)
			x.value(p, elem, n)
			i++
		}
	}
}

func keyParts(it unstable.Iterator) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	for it.Next() {
		n := it.Node()
		if first == nil {
			first = n
		}
		parts = append(parts, string(n.Data))
	}
	return parts, first
}

func (x *posIndex) pos(p *unstable.Parser, n *unstable.Node) position {
	if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return position{1, 1}
	}
	s := p.Shape(n.Raw)
	return position{s.Start.Line, s.Start.Column}
}
