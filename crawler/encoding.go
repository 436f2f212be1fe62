package crawler

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// maxZstdWindow bounds the memory a zstd frame may ask of the decoder
// (its window): 8 MiB, what RFC 8878 recommends decoders support for
// web content; a frame asking more is refused rather than allocated.
const maxZstdWindow = 8 << 20

// maxCodings bounds the codings one response may stack: real servers send
// one, a misconfigured one two ("gzip, gzip"); more is a decompression
// trap, each layer multiplying what a few bytes on the wire become.
const maxCodings = 3

// unsupportedEncodingError is a Content-Encoding linkpatrol cannot undo
// (compress, or a token it does not know): the body cannot be read, which is not the same as a
// page with no links.
type unsupportedEncodingError struct{ coding string }

func (e *unsupportedEncodingError) Error() string {
	return "unsupported Content-Encoding " + e.coding
}

// decoded undoes the Content-Encoding a server applied that Go's transport
// left alone. The transport decodes only a lone "gzip" it asked for, but
// servers also send "deflate" unasked (zlib, or raw deflate from old IIS)
// and "gzip, gzip"; read as they came, a page's links and a robots.txt's
// rules were silently lost: the page "ok" with no links, a Disallow
// ignored (qa6 Q7). Codings are undone last-applied first (RFC 9110
// 8.4).
func decoded(r io.Reader, codings string) (io.Reader, error) {
	parts := strings.Split(codings, ",")
	if len(parts) > maxCodings {
		return nil, &unsupportedEncodingError{coding: codings + " (more than 3 layers)"}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		switch c := strings.ToLower(strings.TrimSpace(parts[i])); c {
		case "", "identity":
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if err != nil {
				return nil, fmt.Errorf("gzip: %w", err)
			}
			r = zr
		case "deflate":
			br := bufio.NewReader(r)
			if head, _ := br.Peek(2); isZlib(head) {
				zr, err := zlib.NewReader(br)
				if err != nil {
					return nil, fmt.Errorf("deflate: %w", err)
				}
				r = zr
			} else {
				r = flate.NewReader(br)
			}
		case "br":
			// What CDNs and precompressed-file servers send whatever was
			// asked (qa10 Q5). The body cap still applies to what it
			// decodes to (readCapped), so a bomb costs the cap, no more.
			r = brotli.NewReader(r)
		case "zstd":
			zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow),
				zstd.WithDecoderMaxMemory(maxZstdWindow*2), zstd.WithDecoderLowmem(true))
			if err != nil {
				return nil, fmt.Errorf("zstd: %w", err)
			}
			r = zr.IOReadCloser()
		default:
			return nil, &unsupportedEncodingError{coding: c}
		}
	}
	return r, nil
}

// isZlib says whether head starts a zlib stream (RFC 1950): method 8
// (deflate), a window of at most 32 KiB, and a header check that makes the
// two bytes a multiple of 31. What "deflate" means by the standard; raw
// deflate passes this test by chance in about 1 case in 250, and those
// fail as a bad compressed body, never silently.
func isZlib(head []byte) bool {
	return len(head) == 2 && head[0]&0x0f == 8 && head[0]>>4 <= 7 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0
}
