package extract

import (
	"bytes"
	"testing"

	"golang.org/x/net/html"
)

func BenchmarkExtract(b *testing.B) {
	doc := realisticPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var links int
	for b.Loop() {
		links = len(Extract(doc, Options{}).Links)
	}
	b.ReportMetric(float64(links), "links/op")
}

func BenchmarkExtractIDs(b *testing.B) {
	doc := realisticPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		Extract(doc, Options{IDs: true})
	}
}

// BenchmarkTokenizeOnly is the floor Extract stands on: our tokenizer
// walking the same page, reading every tag's attribute positions.
func BenchmarkTokenizeOnly(b *testing.B) {
	doc := realisticPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		z := newTokenizer(doc)
		for tt, _, _ := z.next(); tt != tokEOF; tt, _, _ = z.next() {
		}
	}
}

// BenchmarkTokenizeXNetHTML is the x/net/html Tokenizer on the same page,
// which Extract ran on before it had a tokenizer of its own.
func BenchmarkTokenizeXNetHTML(b *testing.B) {
	doc := realisticPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		z := html.NewTokenizer(bytes.NewReader(doc))
		for z.Next() != html.ErrorToken {
		}
	}
}
