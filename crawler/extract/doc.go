// Package extract owns link extraction: it finds every URL an HTML page
// references, with the line the reference starts on, and decodes page bodies
// to UTF-8 first, keeping the page's encoding for the queries of its links
// (Charset: browsers send a query in the page's encoding).
//
// Extraction runs a tokenizer of its own (tokenize.go), a copy of the rules
// of golang.org/x/net/html's Tokenizer over the document in place: it
// splits any input into the same tokens to the byte, and reads each start
// tag's attribute positions in the same pass, so a link is put on the line
// of the attribute that carries it (not the first line of a tag spread over
// several lines). FuzzTokenizerMatchesXNetHTML holds the two tokenizers to
// the byte, tag names and attributes included. Going through
// x/net/html cost a copy of the document, a scan of every tag twice and an
// allocation per attribute key; on a realistic 30 KB page Extract went from
// ~680 allocations to ~140 and ran about four times as fast
// (go test -run '^$' -bench . -benchmem ./crawler/extract/).
//
// A value without a character reference is read from the scan, with NUL and
// CR replaced as the tokenizer replaces them, and "&amp;" decoded. A value
// with any other "&" is decoded by x/net/html's Tokenizer run over that one
// tag, whose rules for references in attribute values are not worth
// copying; should its attributes ever not be the scan's, the tag's own line
// is used rather than a wrong one.
//
// Choices the package makes on purpose:
//
//   - Links inside comments, <script> bodies and the other raw-text elements
//     (<title>, <textarea>, <iframe> fallback, <xmp>, <noembed>, <noframes>)
//     are not links.
//   - <noscript> content is tokenized as markup: it is what browsers without
//     scripting and most crawlers load, so its images and stylesheets can break.
//   - <template> content is extracted: it is inert until a script instantiates
//     it, but it is markup the authors wrote and expect to work.
//   - Schemes are not judged here: mailto:, tel:, javascript: and data: URLs
//     are reported like any other; the rules package decides what to ignore.
//   - Every srcset candidate is reported, also one whose descriptors a browser
//     would reject: the author meant it as a URL.
//   - The document of an <iframe srcdoc> is extracted as a document of its
//     own (three levels deep at most), its links on the page's lines; its
//     <base> and ids stay its own. Obsolete attributes no browser fetches
//     (lowsrc, <html manifest>, codebase, <head profile>) are not links.
package extract
