package extract

import (
	"fmt"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// DecodeUTF8 converts an HTML body to UTF-8 using the charset from the
// Content-Type header, a BOM, or <meta charset>/<meta http-equiv> in the
// first 1024 bytes (charset.DetermineEncoding), e.g. windows-1252 or
// Shift_JIS. A body already in UTF-8 is returned as is, without copying.
//
// One departure from the standard's sniffing: a body that declares no
// charset anywhere and whose first 1024 bytes are plain ASCII would be taken
// as windows-1252; if the whole body is valid UTF-8 it is kept as UTF-8
// instead, so that a non-ASCII URL further down is not turned into mojibake
// and reported broken. A declared charset is always followed, as browsers
// do.
func DecodeUTF8(body []byte, contentType string) ([]byte, error) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || (!certain && name == "windows-1252" && !declaresCharset(body) && utf8.Valid(body)) {
		return body, nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("decode %s body: %w", name, err)
	}
	return out, nil
}

// declaresCharset reports whether the part of body that DetermineEncoding
// prescans could name a charset. Every <meta> declaration it honours
// contains the word "charset", so without it the windows-1252 it returns is
// its default and not the page's word.
func declaresCharset(body []byte) bool {
	head := body[:min(len(body), 1024)]
	for i := range head {
		if hasPrefixFold(head, i, "charset") {
			return true
		}
	}
	return false
}
