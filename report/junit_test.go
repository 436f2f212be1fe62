package report

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linkpatrol/linkpatrol/store"
)

// No XSD validator ships with Go, and no copy of a JUnit schema is vendored
// here, so junitSchema writes down, as data, what Jenkins' junit-10.xsd (the
// schema CI systems follow) demands of the elements we emit: the allowed and
// required attributes, their types, and each element's content model in
// order. validateJUnit checks a document against it, plus the consistency
// CI readers rely on (counts that match the test cases).

type xsdChild struct {
	name     string
	min, max int // max < 0: unbounded
}

type xsdElement struct {
	required []string
	allowed  []string
	children []xsdChild // a sequence
	text     bool       // mixed or simple content allowed
}

var junitSchema = map[string]xsdElement{
	"testsuites": {
		allowed:  []string{"name", "time", "tests", "failures", "disabled", "errors"},
		children: []xsdChild{{"testsuite", 0, -1}},
	},
	"testsuite": {
		required: []string{"name", "tests"},
		allowed:  []string{"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url", "version", "group"},
		children: []xsdChild{{"properties", 0, 1}, {"testcase", 0, -1}, {"system-out", 0, 1}, {"system-err", 0, 1}},
	},
	"properties": {children: []xsdChild{{"property", 1, -1}}},
	"property":   {required: []string{"name", "value"}, allowed: []string{"name", "value"}},
	"testcase": {
		required: []string{"name"},
		allowed:  []string{"name", "assertions", "time", "timestamp", "classname", "status", "class", "file", "line", "log", "group", "url"},
		children: []xsdChild{{"skipped", 0, 1}, {"error", 0, -1}, {"failure", 0, -1}, {"system-out", 0, -1}, {"system-err", 0, -1}},
	},
	"skipped":    {allowed: []string{"message", "type"}, text: true},
	"failure":    {allowed: []string{"message", "type"}, text: true},
	"error":      {allowed: []string{"message", "type"}, text: true},
	"system-out": {text: true},
	"system-err": {text: true},
}

var (
	xsdInt      = regexp.MustCompile(`^[0-9]+$`)
	xsdDecimal  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	xsdDateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$`)
	attrType    = map[string]*regexp.Regexp{
		"tests": xsdInt, "failures": xsdInt, "errors": xsdInt, "skipped": xsdInt, "disabled": xsdInt,
		"assertions": xsdInt, "time": xsdDecimal, "timestamp": xsdDateTime,
	}
)

type xnode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xnode    `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n xnode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func validateJUnit(doc []byte) error {
	var root xnode
	if err := xml.Unmarshal(doc, &root); err != nil {
		return fmt.Errorf("not well-formed: %w", err)
	}
	if root.XMLName.Local != "testsuites" && root.XMLName.Local != "testsuite" {
		return fmt.Errorf("root element %q", root.XMLName.Local)
	}
	if err := validateNode(root, root.XMLName.Local); err != nil {
		return err
	}
	suites := []xnode{root}
	if root.XMLName.Local == "testsuites" {
		suites = root.Children
	}
	total, totalFail := 0, 0
	for _, s := range suites {
		tests, failures, skipped := 0, 0, 0
		for _, c := range s.Children {
			if c.XMLName.Local != "testcase" {
				continue
			}
			tests++
			for _, cc := range c.Children {
				switch cc.XMLName.Local {
				case "failure":
					failures++
				case "skipped":
					skipped++
				}
			}
		}
		for attr, n := range map[string]int{"tests": tests, "failures": failures, "skipped": skipped} {
			if got := s.attr(attr); got != "" && got != strconv.Itoa(n) {
				return fmt.Errorf("testsuite %q: %s=%s but %d found", s.attr("name"), attr, got, n)
			}
		}
		total += tests
		totalFail += failures
	}
	if root.XMLName.Local == "testsuites" {
		if got := root.attr("tests"); got != "" && got != strconv.Itoa(total) {
			return fmt.Errorf("testsuites: tests=%s but %d found", got, total)
		}
		if got := root.attr("failures"); got != "" && got != strconv.Itoa(totalFail) {
			return fmt.Errorf("testsuites: failures=%s but %d found", got, totalFail)
		}
	}
	return nil
}

func validateNode(n xnode, path string) error {
	el, ok := junitSchema[n.XMLName.Local]
	if !ok {
		return fmt.Errorf("%s: element not in the schema", path)
	}
	if n.XMLName.Space != "" {
		return fmt.Errorf("%s: namespace %q", path, n.XMLName.Space)
	}
	for _, a := range n.Attrs {
		if !slices.Contains(el.allowed, a.Name.Local) {
			return fmt.Errorf("%s: attribute %q not allowed", path, a.Name.Local)
		}
		if re := attrType[a.Name.Local]; re != nil && !re.MatchString(a.Value) {
			return fmt.Errorf("%s: attribute %s=%q has the wrong type", path, a.Name.Local, a.Value)
		}
	}
	for _, req := range el.required {
		if !slices.ContainsFunc(n.Attrs, func(a xml.Attr) bool { return a.Name.Local == req }) {
			return fmt.Errorf("%s: required attribute %q missing", path, req)
		}
	}
	if !el.text && strings.TrimSpace(n.Text) != "" {
		return fmt.Errorf("%s: text content not allowed", path)
	}
	i := 0
	for _, want := range el.children {
		count := 0
		for i < len(n.Children) && n.Children[i].XMLName.Local == want.name {
			if err := validateNode(n.Children[i], path+"/"+want.name); err != nil {
				return err
			}
			i++
			count++
		}
		if count < want.min || want.max >= 0 && count > want.max {
			return fmt.Errorf("%s: %d <%s>, want %d to %d", path, count, want.name, want.min, want.max)
		}
	}
	if i < len(n.Children) {
		return fmt.Errorf("%s: <%s> not allowed here", path, n.Children[i].XMLName.Local)
	}
	return nil
}

func TestJUnitValid(t *testing.T) {
	t.Parallel()
	web := fillStore(t, webHistory())
	h := webHistory()
	// Control characters in the raw text of an invalid URL cannot go into XML.
	h[1].results = append(h[1].results, target(store.URLRecord{URL: "bad\x00\x1b]]>url", Verdict: store.VerdictBroken, Error: "invalid URL"}))
	h[1].results[0].Links = append(h[1].results[0].Links, link("bad\x00\x1b]]>url", 70))
	tests := []struct {
		name     string
		r        *Report
		cases    int
		failures int
	}{
		{"web", build(t, web, 2, Options{}), 10, 6},
		{"all", build(t, web, 2, Options{All: true}), 15, 6},
		{"nothing to report", build(t, web, 2, Options{ReportAfter: Threshold{Failures: 99}}), 1, 0},
		// The pass was stopped: one more failing case says so.
		{"directory", build(t, fillStore(t, dirHistory()), 1, Options{BaseDir: "/work"}), 4, 4},
		{"site down", build(t, fillStore(t, downHistory()), 1, Options{}), 2, 1},
		{"hostile text", build(t, fillStore(t, h), 2, Options{}), 11, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, tt.r, "junit")
			if err := validateJUnit([]byte(out)); err != nil {
				t.Fatalf("invalid JUnit XML: %v\n%s", err, out)
			}
			var doc junitSuites
			if err := xml.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Tests != tt.cases || doc.Failures != tt.failures {
				t.Errorf("tests=%d failures=%d, want %d and %d", doc.Tests, doc.Failures, tt.cases, tt.failures)
			}
		})
	}
}

func TestJUnitValidatorRejects(t *testing.T) {
	t.Parallel()
	bad := []string{
		`<testsuites><testsuite tests="1"><testcase name="a"/></testsuite></testsuites>`,                                        // suite without name
		`<testsuites><testsuite name="s" tests="2"><testcase name="a"/></testsuite></testsuites>`,                               // count off
		`<testsuites><testsuite name="s" tests="1"><testcase name="a"><failure/><skipped/></testcase></testsuite></testsuites>`, // order
		`<testsuites><testsuite name="s" tests="1" time="1m"><testcase name="a"/></testsuite></testsuites>`,                     // type
		`<testsuites><testsuite name="s" tests="1"><testcase name="a" flaky="yes"/></testsuite></testsuites>`,                   // attribute
		`<testsuites><testsuite name="s" tests="1"><testcase name="a"/><properties/></testsuite></testsuites>`,                  // order
		`<testsuites><testsuite name="s" tests="0" timestamp="2026-11-23T03:00:00Z"></testsuite></testsuites>`,                  // timestamp with zone
	}
	for _, doc := range bad {
		if err := validateJUnit([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}
