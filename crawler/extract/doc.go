// Package extract owns link extraction: it finds every URL an HTML page
// references, with the line the reference starts on, and decodes page bodies
// to UTF-8 first.
//
// Extraction runs golang.org/x/net/html's Tokenizer over the document and
// follows the byte offset of every token through Raw. To put a link on the
// line of the attribute that carries it (not the first line of a tag spread
// over several lines), each start tag is scanned a second time by a mirror of
// the tokenizer's own attribute rules (FuzzScanMatchesTokenizer holds the two
// to the byte). A value without a character reference is read from that scan,
// with NUL and CR replaced as the tokenizer replaces them: asking the
// tokenizer costs two allocations per attribute. A value with a "&" is the
// tokenizer's entity-decoded one, and where the mirror and the tokenizer do
// not agree on such a tag's attributes, the tag's own line is used rather
// than a wrong one.
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
package extract
