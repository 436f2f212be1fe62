package rules

import (
	"fmt"
	"strings"
)

// fieldError says which field of a config item (and which key inside it,
// for tables such as headers) an error is about.
type fieldError struct {
	field []string
	err   error
}

func (e *fieldError) Error() string {
	if len(e.field) == 0 || e.field[0] == "" {
		return e.err.Error()
	}
	return strings.Join(e.field, ".") + ": " + e.err.Error()
}

func (e *fieldError) Unwrap() error { return e.err }

func fieldErr(field string, err error, keys ...string) error {
	return &fieldError{field: append([]string{field}, keys...), err: err}
}

// itemError is an error in one item of a Config. path locates it in a
// config file ("rule", 2, "regex"); name says which item it is for people
// when the item did not come from a file (a command-line flag, say).
type itemError struct {
	path []any
	name string
	err  error
}

func (e *itemError) Error() string { return e.name + ": " + e.err.Error() }

func (e *itemError) Unwrap() error { return e.err }

// itemErr wraps err from the item at path, moving a fieldError's field
// into the path.
func itemErr(name string, err error, path ...any) error {
	if fe, ok := err.(*fieldError); ok {
		for _, f := range fe.field {
			if f != "" {
				path = append(path, f)
			}
		}
		if len(fe.field) > 0 && fe.field[0] != "" {
			name += " " + strings.Join(fe.field, ".")
		}
		err = fe.err
	}
	return &itemError{path: path, name: name, err: err}
}

// ConfigError is an error at a place in a config file. Error prints it as
// "file:line:col: message", the form editors jump to.
type ConfigError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}
