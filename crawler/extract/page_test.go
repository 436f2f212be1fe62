package extract

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// realisticPage builds a page shaped like a content site's article: a head
// with stylesheets, scripts and an inline style block, a navigation bar,
// running text with inline links (some with the href on a later line),
// responsive images with srcset candidates on their own lines, an inline
// script and a footer. It is deterministic, about 30 KB with about 100
// links.
func realisticPage() []byte {
	rng := rand.New(rand.NewPCG(7, 11))
	words := strings.Fields("the tide clock movement harbour ferry timetable " +
		"bakery workshop notebook postcard lighthouse repair spring brass gear " +
		"escapement pendulum winding dial hand quartz battery solder bench")
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				if i%11 == 0 {
					b.WriteString("\n")
				} else {
					b.WriteString(" ")
				}
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<title>Notes from the workshop &amp; the harbour</title>\n")
	b.WriteString("<link rel=\"canonical\" href=\"https://www.example.org/notes/workshop/\">\n")
	b.WriteString("<link rel=\"stylesheet\" href=\"/assets/css/main.css?v=3\">\n")
	b.WriteString("<link rel=\"icon\" href=\"/favicon.ico\">\n")
	b.WriteString("<script src=\"/assets/js/vendor.js\" defer></script>\n")
	b.WriteString("<style>\n.hero{background:url(/assets/img/hero.jpg) center/cover}\n" +
		".icon-a{background-image:url(\"/assets/img/icons.svg#a\")}\n</style>\n")
	b.WriteString("</head>\n<body class=\"article\">\n<header class=\"site\">\n<nav aria-label=\"Main\"><ul>\n")
	for i := range 15 {
		fmt.Fprintf(&b, "<li class=\"nav-item\"><a class=\"nav-link\" href=\"/section/%d/\">%s</a></li>\n", i, text(2))
	}
	b.WriteString("</ul></nav>\n</header>\n<main id=\"main\">\n<article>\n<h1 id=\"title\">" + text(5) + "</h1>\n")
	for p := range 20 {
		fmt.Fprintf(&b, "<p class=\"para\" id=\"p%d\">%s ", p, text(40))
		for range 3 {
			if rng.IntN(5) == 0 {
				fmt.Fprintf(&b, "<a class=\"more\"\n   href=\"/notes/%d.html#sec-%d\">%s</a> %s ", rng.IntN(500), rng.IntN(9), text(3), text(20))
			} else {
				fmt.Fprintf(&b, "<a href=\"/notes/%d.html\" title=\"%s\">%s</a> %s ", rng.IntN(500), text(3), text(3), text(20))
			}
		}
		b.WriteString("</p>\n")
		if p%3 == 2 {
			n := rng.IntN(100)
			fmt.Fprintf(&b, "<figure>\n<img src=\"/img/%d-640.jpg\"\n     srcset=\"/img/%d-640.jpg 640w,\n"+
				"             /img/%d-1280.jpg 1280w\"\n     sizes=\"(max-width: 700px) 100vw, 700px\" alt=\"%s\" loading=\"lazy\">\n"+
				"<figcaption>%s</figcaption>\n</figure>\n", n, n, n, text(4), text(12))
		}
	}
	b.WriteString("</article>\n</main>\n<script>\n")
	for i := range 40 {
		fmt.Fprintf(&b, "window.cfg%d = {url: \"/api/v1/items/%d\", html: '<a href=\"/x\">x</a>', n: %d};\n", i, i, i*i)
	}
	b.WriteString("</script>\n<footer class=\"site\">\n")
	for i := range 8 {
		fmt.Fprintf(&b, "<a href=\"https://partner%d.example.com/?ref=notes&amp;id=%d\">%s</a> &middot;\n", i, i, text(2))
	}
	b.WriteString("<p>&copy; 2024 <a href=\"mailto:editor@example.org\">the editor</a></p>\n</footer>\n</body>\n</html>\n")
	return []byte(b.String())
}
