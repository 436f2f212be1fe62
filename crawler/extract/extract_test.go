package extract

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func pg(url string, line int, tag, attr string) Link {
	return Link{URL: url, Line: line, Tag: tag, Attr: attr, Kind: KindPage}
}

func rs(url string, line int, tag, attr string) Link {
	return Link{URL: url, Line: line, Tag: tag, Attr: attr, Kind: KindResource}
}

func sh(url string, line int) Link {
	return Link{URL: url, Line: line, Tag: "link", Attr: "href", Kind: KindStylesheet}
}

func TestExtractElements(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Link
	}{
		{"a", `<a href="/x">x</a>`, []Link{pg("/x", 1, "a", "href")}},
		{"area", `<map><area shape=rect href="/a"></map>`, []Link{pg("/a", 1, "area", "href")}},
		{"link stylesheet", `<link rel="stylesheet" href="/s.css"><link rel="Alternate StyleSheet" href="/a.css">`, []Link{sh("/s.css", 1), sh("/a.css", 1)}},
		{"link canonical is a page", `<link rel=canonical href="https://e.test/p">`, []Link{pg("https://e.test/p", 1, "link", "href")}},
		// Every Sphinx and DocBook page has these; a page first met in one
		// must still be parsed.
		{"link navigation is a page", "<link rel=\"next\" href=\"n.html\"><link href=\"p.html\" REL=\"Prev\">\n<link rel=index href=genindex.html><link rel=\"search\" href=search.html><link rel=up href=../><link rel=\"contents start\" href=/>",
			[]Link{pg("n.html", 1, "link", "href"), pg("p.html", 1, "link", "href"), pg("genindex.html", 2, "link", "href"),
				pg("search.html", 2, "link", "href"), pg("../", 2, "link", "href"), pg("/", 2, "link", "href")}},
		{"link navigation and resource is a resource", `<link rel="index icon" href="/i.ico">`, []Link{rs("/i.ico", 1, "link", "href")}},
		{"a style element after a navigation link is a resource", `<link rel=next href=n.html><style>body{background:url(/f.png)}</style>`, []Link{pg("n.html", 1, "link", "href"), {URL: "/f.png", Line: 1, Tag: "style", Kind: KindResource}}},
		{"an @import in a style element is a stylesheet", `<link rel=next href=n.html><style>@import url(/f.css);</style>`, []Link{pg("n.html", 1, "link", "href"), {URL: "/f.css", Line: 1, Tag: "style", Attr: "@import", Kind: KindStylesheet}}},
		{"link without rel is a resource", `<link href="/x.css">`, []Link{rs("/x.css", 1, "link", "href")}},
		{"preconnect and dns-prefetch are not links", `<link rel="preconnect" href="https://fonts.test"><link rel=dns-prefetch href="//cdn.test"><link rel="preconnect dns-prefetch" href="https://b.test" crossorigin>`, nil},
		{"preconnect with a resource token is a resource", `<link rel="preconnect stylesheet" href="/s.css">`, []Link{sh("/s.css", 1)}},
		{"link imagesrcset", `<link rel=preload as=image imagesrcset="/a.jpg 1x, /b.jpg 2x">`,
			[]Link{rs("/a.jpg", 1, "link", "imagesrcset"), rs("/b.jpg", 1, "link", "imagesrcset")}},
		{"img src", `<img src="/i.png" alt="">`, []Link{rs("/i.png", 1, "img", "src")}},
		{"img srcset", `<img srcset="/a.png 1x, /b.png 2x">`,
			[]Link{rs("/a.png", 1, "img", "srcset"), rs("/b.png", 1, "img", "srcset")}},
		{"source src and srcset", `<video><source src="/v.webm"></video><picture><source srcset="/p.webp"></picture>`,
			[]Link{rs("/v.webm", 1, "source", "src"), rs("/p.webp", 1, "source", "srcset")}},
		{"script src", `<script src="/app.js"></script>`, []Link{rs("/app.js", 1, "script", "src")}},
		{"iframe", `<iframe src="/embed"></iframe>`, []Link{pg("/embed", 1, "iframe", "src")}},
		{"frame", `<frameset><frame src="/left.html"></frameset>`, []Link{pg("/left.html", 1, "frame", "src")}},
		{"video src and poster", `<video src="/v.mp4" poster="/v.jpg"></video>`,
			[]Link{rs("/v.mp4", 1, "video", "src"), rs("/v.jpg", 1, "video", "poster")}},
		{"audio", `<audio src="/a.ogg"></audio>`, []Link{rs("/a.ogg", 1, "audio", "src")}},
		{"track", `<video><track src="/c.vtt"></video>`, []Link{rs("/c.vtt", 1, "track", "src")}},
		{"object", `<object data="/m.swf"></object>`, []Link{rs("/m.swf", 1, "object", "data")}},
		{"embed", `<embed src="/e.svg">`, []Link{rs("/e.svg", 1, "embed", "src")}},
		{"input type=image", `<input type="IMAGE" src="/go.png">`, []Link{rs("/go.png", 1, "input", "src")}},
		{"input type after src", `<input src="/go.png" type=image>`, []Link{rs("/go.png", 1, "input", "src")}},
		{"input other type", `<input type="text" src="/no.png"><input src="/none.png">`, nil},
		{"cite", `<blockquote cite="/b"></blockquote><q cite="/q"></q><del cite="/d"></del><ins cite="/i"></ins>`,
			[]Link{pg("/b", 1, "blockquote", "cite"), pg("/q", 1, "q", "cite"), pg("/d", 1, "del", "cite"), pg("/i", 1, "ins", "cite")}},
		{"meta refresh", `<meta http-equiv="refresh" content="5; url=/next">`, []Link{pg("/next", 1, "meta", "content")}},
		{"meta refresh quoted", `<meta http-equiv=REFRESH content="0;URL='/next page'">`, []Link{pg("/next page", 1, "meta", "content")}},
		{"meta refresh content first", `<meta content="3, /n" http-equiv="Refresh">`, []Link{pg("/n", 1, "meta", "content")}},
		{"meta refresh without url", `<meta http-equiv="refresh" content="30">`, nil},
		{"meta not refresh", `<meta name="description" content="5; url=/no"><meta property="og:url" content="/og">`, nil},
		// A share preview's image is fetched by every site the page is
		// shared on (qa9 T14; muffet checks it): a resource, stored under
		// the property's name.
		{"meta og:image", "<meta property=\"og:image\" content=\" https://e.test/card.png \">\n<meta content=/v.mp4 property=OG:VIDEO:URL>",
			[]Link{rs("https://e.test/card.png", 1, "meta", "og:image"), rs("/v.mp4", 2, "meta", "og:video:url")}},
		{"meta twitter:image by name", `<meta name="twitter:image" content="/t.png"><meta name="twitter:card" content="/no">`, []Link{rs("/t.png", 1, "meta", "twitter:image")}},
		{"meta og:image with no content", `<meta property="og:image" content="  ">`, nil},
		{"meta msapplication config none is no link", "<meta name=\"msapplication-config\" content=\" None \"/>\n<meta name=msapplication-TileImage content=none>", nil},
		{"meta msapplication tile image and config", "<meta name=\"msapplication-TileImage\" content=\"/wp-content/uploads/cropped-icon-270x270.png\">\n<meta name=msapplication-config content=/browserconfig.xml><meta name=msapplication-TileColor content=/no>",
			[]Link{rs("/wp-content/uploads/cropped-icon-270x270.png", 1, "meta", "msapplication-tileimage"), rs("/browserconfig.xml", 2, "meta", "msapplication-config")}},
		{"svg", `<svg><a xlink:href="/s"><image href="/i.png"/><use xlink:href="/sprite.svg#x"/></a></svg>`,
			[]Link{pg("/s", 1, "a", "xlink:href"), rs("/i.png", 1, "image", "href"), rs("/sprite.svg#x", 1, "use", "xlink:href")}},
		{"style attribute on any element", `<div style="background: url(/bg.png)"></div>`, []Link{rs("/bg.png", 1, "div", "style")}},
		{"style attribute on custom element", `<my-very-long-custom-element style="background:url(/c.png)">`,
			[]Link{rs("/c.png", 1, "my-very-long-custom-element", "style")}},
		{"style attribute on a is a resource", `<a href="/p" style="background:url(/i.png)">`,
			[]Link{pg("/p", 1, "a", "href"), rs("/i.png", 1, "a", "style")}},
		{"style block", "<style>body{background:url(/b.png)}\n@import '/i.css';</style>",
			[]Link{rs("/b.png", 1, "style", ""), {URL: "/i.css", Line: 2, Tag: "style", Attr: "@import", Kind: KindStylesheet}}},
		{"schemes are kept", `<a href="mailto:a@b.test">m</a><a href="tel:+1">t</a><a href="javascript:void(0)">j</a><img src="data:image/png;base64,AA==">`,
			[]Link{pg("mailto:a@b.test", 1, "a", "href"), pg("tel:+1", 1, "a", "href"), pg("javascript:void(0)", 1, "a", "href"), rs("data:image/png;base64,AA==", 1, "img", "src")}},
		{"fragment only", `<a href="#top">top</a>`, []Link{pg("#top", 1, "a", "href")}},
		{"empty and blank are skipped", `<a href="">self</a><a href="  ">blank</a><img src><a href>`, nil},
		{"white space trimmed", "<a href=\" \t/x\n \">x</a>", []Link{pg("/x", 1, "a", "href")}},
		{"form is not a link", `<form action="/post"><button formaction="/b">b</button></form>`, nil},
		// qa9 T14: every browser draws these backgrounds; old sites and
		// mail templates still write them.
		{"background of body and the table elements",
			`<body background="/bg.gif"><table background=/t.gif><thead background=/h.gif><tr background=/r.gif><th background=/th.gif><td BACKGROUND=" /td.gif ">` +
				`<tbody background=/b.gif><tfoot background=/f.gif><div background=/no.gif><p background=/no2.gif>`,
			[]Link{rs("/bg.gif", 1, "body", "background"), rs("/t.gif", 1, "table", "background"), rs("/h.gif", 1, "thead", "background"),
				rs("/r.gif", 1, "tr", "background"), rs("/th.gif", 1, "th", "background"), rs("/td.gif", 1, "td", "background"),
				rs("/b.gif", 1, "tbody", "background"), rs("/f.gif", 1, "tfoot", "background")}},
		{"longdesc is a page", `<img src=/c.png longdesc="/c-described.html"><iframe longdesc=/f.html></iframe><frameset><frame src=/l.html longdesc=/l-desc.html><video longdesc=/no>`,
			[]Link{rs("/c.png", 1, "img", "src"), pg("/c-described.html", 1, "img", "longdesc"), pg("/f.html", 1, "iframe", "longdesc"),
				pg("/l.html", 1, "frame", "src"), pg("/l-desc.html", 1, "frame", "longdesc")}},
		// A browser renders the srcdoc document instead of the src; its
		// links keep their own element and attribute.
		{"iframe srcdoc", `<iframe src=/fallback srcdoc="<p>x <a href=&quot;/gone/in-srcdoc&quot;>y</a><img src='/s.png'><style>a{background:url(/c.png)}</style>"></iframe>`,
			[]Link{pg("/fallback", 1, "iframe", "src"), pg("/gone/in-srcdoc", 1, "a", "href"), rs("/s.png", 1, "img", "src"), rs("/c.png", 1, "style", "")}},
		{"refresh in srcdoc is the frame's", `<iframe srcdoc="<meta http-equiv=refresh content='0;url=/away'>"></iframe>`,
			[]Link{pg("/away", 1, "iframe", "srcdoc")}},
		{"srcdoc is not read elsewhere", `<frame srcdoc="<a href=/no>"><div srcdoc="<a href=/no2>">`, nil},
		{"srcdoc inside srcdoc", `<iframe srcdoc="<iframe srcdoc='<a href=&amp;quot;/deep&amp;quot;>'></iframe>"></iframe>`,
			[]Link{pg("/deep", 1, "a", "href")}},
		{"base is not a link", `<base href="/root/"><a href="x">`, []Link{pg("x", 1, "a", "href")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract([]byte(tt.doc), Options{}).Links
			assertLinks(t, got, tt.want)
		})
	}
}

func TestExtractLines(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Link
	}{
		{"href on a later line of its tag",
			"<p>\n<a class=\"x\"\n   title=\"t\"\n   href=\"/x\">x</a>",
			[]Link{pg("/x", 4, "a", "href")}},
		{"value on a later line than its key counts from the key",
			"<a href\n=\n\"/x\">", []Link{pg("/x", 1, "a", "href")}},
		{"crlf counts once", "<p>\r\n\r\n<a\r\nhref=/x>", []Link{pg("/x", 4, "a", "href")}},
		{"bare cr ends a line", "<p>\r\r<a\rhref=/x>", []Link{pg("/x", 4, "a", "href")}},
		{"mixed endings", "a\nb\r\nc\rd\n\r<img src=/i>", []Link{rs("/i", 6, "img", "src")}},
		{"cr at a token boundary before lf", "<p>\r\n<img src=/i>", []Link{rs("/i", 2, "img", "src")}},
		{"lines across comments and scripts",
			"<!--\n\n-->\n<script>\nvar a = '<a href=/no>';\n</script>\n<a href=/yes>",
			[]Link{pg("/yes", 7, "a", "href")}},
		{"srcset candidates on their own lines",
			"<img\n  src=/a.png\n  srcset=\"/a.png 1x,\n          /b.png 2x,\n\n /c.png 3x\">",
			[]Link{rs("/a.png", 2, "img", "src"), rs("/a.png", 3, "img", "srcset"), rs("/b.png", 4, "img", "srcset"), rs("/c.png", 6, "img", "srcset")}},
		{"srcset starting on the line after its key",
			"<img srcset=\n\"/a.png 1x,\r\n/b.png 2x\">",
			[]Link{rs("/a.png", 2, "img", "srcset"), rs("/b.png", 3, "img", "srcset")}},
		{"srcset with cr line endings",
			"<img srcset=\"/a.png 1x,\r/b.png 2x,\r\n/c.png 3x\">",
			[]Link{rs("/a.png", 1, "img", "srcset"), rs("/b.png", 2, "img", "srcset"), rs("/c.png", 3, "img", "srcset")}},
		{"srcset with entities keeps lines",
			"<img srcset=\"/a.png?x=1&amp;y=2 1x,\n/b&#46;png 2x\">",
			[]Link{rs("/a.png?x=1&y=2", 1, "img", "srcset"), rs("/b.png", 2, "img", "srcset")}},
		{"a newline made by an entity falls back to the attribute's line",
			"<p>\n<img srcset=\"/a.png 1x,&#10;/b.png 2x,\n/c.png 3x\">",
			[]Link{rs("/a.png", 2, "img", "srcset"), rs("/b.png", 2, "img", "srcset"), rs("/c.png", 2, "img", "srcset")}},
		{"url( in a style block on later lines",
			"<style>\nh1 { color: red }\n.a {\n  background:\n    URL( \"/a.png\" ) }\n/* url(/no.png) */\n.b{content:'url(/no2)'}\n.c{background:url(/c.png)}\n</style>",
			[]Link{rs("/a.png", 5, "style", ""), rs("/c.png", 8, "style", "")}},
		{"url( in a multi-line style attribute",
			"<div class=x\n     style=\"color: red;\n            background: url(/a.png);\r\n            border-image: url('/b.png')\">",
			[]Link{rs("/a.png", 3, "div", "style"), rs("/b.png", 4, "div", "style")}},
		{"entity-encoded quotes in a style attribute",
			"<div\nstyle=\"background:url(&quot;/q.png&quot;)\">",
			[]Link{rs("/q.png", 2, "div", "style")}},
		{"meta refresh on the line of content",
			"<meta http-equiv=\"refresh\"\n      content=\"0;\n url=/next\">",
			[]Link{pg("/next", 2, "meta", "content")}},
		{"srcdoc links on the page's lines",
			"<p>\n<iframe title=x\n  srcdoc=\"<p>hi\n<a class=b\n href=&quot;/gone/in-srcdoc&quot;>x</a>\r\n<img\rsrc=/i.png>\" src=/after></iframe>\n<a href=/next>",
			[]Link{pg("/gone/in-srcdoc", 5, "a", "href"), rs("/i.png", 7, "img", "src"), pg("/after", 7, "iframe", "src"), pg("/next", 8, "a", "href")}},
		{"srcdoc starting on the line after its key",
			"<iframe srcdoc=\n'\n<a href=/a>'>",
			[]Link{pg("/a", 3, "a", "href")}},
		{"a newline made by an entity in srcdoc falls back to the attribute's line",
			"<p>\n<iframe\nsrcdoc=\"<a href=/a>&#10;<a href=/b>\n<a href=/c>\"></iframe>",
			[]Link{pg("/a", 3, "a", "href"), pg("/b", 3, "a", "href"), pg("/c", 3, "a", "href")}},
		{"a carriage return made by an entity in srcdoc falls back to the attribute's line",
			"<iframe\nsrcdoc=\"<a href=/a>&#13;<a href=/b>\"></iframe>",
			[]Link{pg("/a", 2, "a", "href"), pg("/b", 2, "a", "href")}},
		{"background on a later line of its tag",
			"<table\n  width=100%\n  background=\"/t.gif\"><tr><td\nbackground=/td.gif>",
			[]Link{rs("/t.gif", 3, "table", "background"), rs("/td.gif", 4, "td", "background")}},
		{"attributes after a multi-line value",
			"<img alt=\"one\ntwo\nthree\" src=/i.png>",
			[]Link{rs("/i.png", 3, "img", "src")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract([]byte(tt.doc), Options{}).Links
			assertLinks(t, got, tt.want)
		})
	}
}

func TestExtractNotLinks(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Link
	}{
		{"comment", `<!-- <a href="/c">c</a> --><a href="/x">`, []Link{pg("/x", 1, "a", "href")}},
		{"conditional comment", `<!--[if IE]><link rel=stylesheet href="/ie.css"><![endif]-->`, nil},
		{"script body", `<script>document.write('<img src="/s.png">')</script>`, nil},
		{"title is raw text", `<title><a href="/t">t</a></title><a href=/x>`, []Link{pg("/x", 1, "a", "href")}},
		{"textarea is raw text", `<textarea><a href="/t">t</a></textarea>`, nil},
		{"iframe fallback is raw text", `<iframe src="/f"><a href="/fallback">x</a></iframe>`, []Link{pg("/f", 1, "iframe", "src")}},
		{"xmp", `<xmp><a href="/x"></xmp>`, nil},
		{"noscript content is markup", "<noscript>\n<img src=\"/pixel.gif\"></noscript>", []Link{rs("/pixel.gif", 2, "img", "src")}},
		{"template content is extracted", `<template><a href="/t">t</a></template>`, []Link{pg("/t", 1, "a", "href")}},
		{"end tags carry no links", `<a href=/x></a href=/no>`, []Link{pg("/x", 1, "a", "href")}},
		{"processing instruction", `<?xml href="/no"?><a href=/x>`, []Link{pg("/x", 1, "a", "href")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract([]byte(tt.doc), Options{}).Links
			assertLinks(t, got, tt.want)
		})
	}
}

func TestExtractMalformed(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []Link
	}{
		{"unclosed elements", `<p><a href=/a><b><a href=/b>`, []Link{pg("/a", 1, "a", "href"), pg("/b", 1, "a", "href")}},
		{"tag cut off at the end of input", `<a href=/a></a><a href="/b`, []Link{pg("/a", 1, "a", "href")}},
		{"unquoted values", "<a href=/x?a=1&amp;b=2 class=c>", []Link{pg("/x?a=1&b=2", 1, "a", "href")}},
		{"unquoted value ending at >", "<img src=/i.png>", []Link{rs("/i.png", 1, "img", "src")}},
		{"duplicate attribute: the first wins, on its line",
			"<a\nhref=/first\nhref=/second\nHREF=/third>",
			[]Link{pg("/first", 2, "a", "href")}},
		{"duplicate before the url attribute shifts nothing",
			"<img alt=a\nALT=b\nsrc=/i.png>",
			[]Link{rs("/i.png", 3, "img", "src")}},
		{"attributes without values", "<a download\nhidden\nhref=/f.zip>", []Link{pg("/f.zip", 3, "a", "href")}},
		{"slash noise", "<img / src=/a.png><img/src=/b.png><a/\n/href=/c/>", []Link{
			rs("/a.png", 1, "img", "src"), rs("/b.png", 1, "img", "src"), pg("/c/", 2, "a", "href")}},
		{"equals sign starting a key", "<a =x\nhref=/y>", []Link{pg("/y", 2, "a", "href")}},
		{"upper-case names", `<A HREF="/x"><IMG SRC="/i"></A>`, []Link{pg("/x", 1, "a", "href"), rs("/i", 1, "img", "src")}},
		{"entity-encoded url", `<a href="/s?q=a&amp;p=2&lt;&#x41;&copy=3">`, []Link{pg("/s?q=a&p=2<A&copy=3", 1, "a", "href")}},
		{"nul bytes", "<a href=\"/a\x00b\">\x00<img\x00 src=/no><img src=/i\x00.png>",
			[]Link{pg("/a\uFFFDb", 1, "a", "href"), rs("/i\uFFFD.png", 1, "img", "src")}},
		{"nul in a key", "<a h\x00ref=/no\nhref=/x>", []Link{pg("/x", 2, "a", "href")}},
		{"nul in style block", "<style>a{background:url(/a\x00.png)}</style>", []Link{rs("/a\uFFFD.png", 1, "style", "")}},
		{"unterminated quote runs on", "<a href=\"/x>text</a>\n<a href=\"/y\">",
			[]Link{pg("/x>text</a>\n<a href=", 1, "a", "href")}},
		{"lone less-than signs", "a < b <3 <\n<a href=/x>", []Link{pg("/x", 2, "a", "href")}},
		{"tag name with a nul", "<a\x00 href=/x>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract([]byte(tt.doc), Options{}).Links
			assertLinks(t, got, tt.want)
		})
	}
}

func TestExtractBase(t *testing.T) {
	tests := []struct {
		doc, want string
	}{
		{`<a href=x>`, ""},
		{`<base href=" /a/ "><base href="/b/">`, "/a/"},
		{`<base target=_top><base href="/b/">`, "/b/"},
		{`<base href=""><base href="/b/">`, ""},
		{`<base href="/p?a=1&amp;b=2">`, "/p?a=1&b=2"},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			if got := Extract([]byte(tt.doc), Options{}).Base; got != tt.want {
				t.Errorf("Base = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExtractIDs(t *testing.T) {
	doc := `<h1 id="top">T</h1><a name="old-anchor"></a><p ID=Mixed><a id="x" name="y" href="#top"><span name="not-an-anchor" id=""></span><div id="a&amp;b">`
	if got := Extract([]byte(doc), Options{}).IDs; got != nil {
		t.Errorf("IDs without Options.IDs = %q, want nil", got)
	}
	p := Extract([]byte(doc), Options{IDs: true})
	want := []string{"top", "old-anchor", "Mixed", "x", "y", "a&b"}
	if !slices.Equal(p.IDs, want) {
		t.Errorf("IDs = %q, want %q", p.IDs, want)
	}
	assertLinks(t, p.Links, []Link{pg("#top", 1, "a", "href")})
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		tag, attr string
		want      Kind
	}{
		{"a", "href", KindPage},
		{"a", "xlink:href", KindPage},
		{"a", "style", KindResource},
		{"area", "href", KindPage},
		{"iframe", "src", KindPage},
		{"frame", "src", KindPage},
		{"meta", "content", KindPage},
		{RefreshHeaderTag, RefreshHeaderAttr, KindPage},
		{"blockquote", "cite", KindPage},
		{"q", "cite", KindPage},
		{"img", "src", KindResource},
		{"img", "srcset", KindResource},
		{"link", "href", KindResource},
		{"style", "", KindResource},
		{"style", "@import", KindStylesheet},
		{"css", "", KindResource},
		{"css", "@import", KindStylesheet},
		{"div", "style", KindResource},
		{"img", "longdesc", KindPage},
		{"iframe", "longdesc", KindPage},
		{"frame", "longdesc", KindPage},
		{"body", "background", KindResource},
		{"td", "background", KindResource},
	}
	for _, tt := range tests {
		if got := KindOf(tt.tag, tt.attr); got != tt.want {
			t.Errorf("KindOf(%q, %q) = %d, want %d", tt.tag, tt.attr, got, tt.want)
		}
	}
}

// TestLineEndingsAgree checks on whole documents that "\n", "\r\n" and "\r"
// give the same links on the same lines.
func TestLineEndingsAgree(t *testing.T) {
	for _, name := range []string{"blog.html", "legacy.html"} {
		doc := readTestdata(t, name)
		want := Extract(doc, Options{IDs: true})
		for _, eol := range []string{"\r\n", "\r"} {
			converted := []byte(strings.ReplaceAll(string(doc), "\n", eol))
			got := Extract(converted, Options{IDs: true})
			if !slices.Equal(got.Links, want.Links) || !slices.Equal(got.IDs, want.IDs) || got.Base != want.Base {
				t.Errorf("%s with %q line endings:\n got %+v\nwant %+v", name, eol, got, want)
			}
		}
	}
}

// TestLinesPointAtAttributes checks every link of the realistic documents
// against an independent, naive reading of the source: the line a link is
// reported on must hold the attribute's name (or, for srcset candidates and
// CSS, the URL itself).
func TestLinesPointAtAttributes(t *testing.T) {
	docs := map[string][]byte{
		"blog.html":   readTestdata(t, "blog.html"),
		"legacy.html": readTestdata(t, "legacy.html"),
		"generated":   realisticPage(),
	}
	for name, doc := range docs {
		lines := strings.Split(string(doc), "\n")
		links := Extract(doc, Options{}).Links
		if len(links) == 0 {
			t.Fatalf("%s: no links", name)
		}
		for _, l := range links {
			text := strings.ToLower(lines[l.Line-1])
			var want string
			switch l.Attr {
			case "", "style", "srcset", "imagesrcset":
				want = strings.ToLower(l.URL)
			default:
				want = l.Attr
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s: %+v: line %d is %q, which lacks %q", name, l, l.Line, text, want)
			}
		}
	}
}

func TestBlogDocument(t *testing.T) {
	p := Extract(readTestdata(t, "blog.html"), Options{IDs: true})
	if want := []string{"content", "top", "share-tpl"}; !slices.Equal(p.IDs, want) {
		t.Errorf("IDs = %q, want %q", p.IDs, want)
	}
	// A sample with one link of each way of writing it; the cross-check
	// against goquery covers the rest of the document.
	for _, want := range []Link{
		rs("/img/hero-1600.jpg", 14, "link", "imagesrcset"),
		sh("/css/site.css?v=20240311", 17),
		{URL: "/css/fonts.css", Line: 20, Tag: "style", Attr: "@import", Kind: KindStylesheet},
		rs("/img/hero-blur.jpg", 21, "style", ""),
		sh("/css/noscript.css", 31),
		pg("/tags/clocks/", 42, "a", "href"),
		rs("/img/clock-1280.webp", 58, "source", "srcset"),
		rs("/img/clock-1280.jpg", 60, "img", "srcset"),
		pg("https://photos.example/u/anna?ref=notebook&utm_source=blog", 64, "a", "href"),
		pg("https://clocks.example/forum/t/1234", 72, "blockquote", "cite"),
		rs("/img/video-poster-bg.png", 80, "div", "style"),
		rs("/media/tide-clock-poster.jpg", 81, "video", "poster"),
		rs("/media/tide-clock.en.vtt", 84, "track", "src"),
		pg("https://social.example/share?u=https%3A%2F%2Fnotebook.example%2F", 89, "a", "href"),
		rs("https://licensebuttons.example/l/by-sa/4.0/80x15.png", 99, "img", "src"),
		rs("/pixel.gif?noscript=1", 103, "img", "src"),
	} {
		if !slices.Contains(p.Links, want) {
			t.Errorf("missing %+v", want)
		}
	}
	for _, l := range p.Links {
		if strings.Contains(l.URL, "not-a-link") || strings.Contains(l.URL, "retired") ||
			strings.Contains(l.URL, "inline-script-link") || strings.Contains(l.URL, "old-footer") ||
			strings.Contains(l.URL, "html5shiv") {
			t.Errorf("extracted %+v, which is not a link", l)
		}
	}
}

func assertLinks(t *testing.T, got, want []Link) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("links:\n got %+v\nwant %+v", got, want)
	}
}

// TestPositionFallback makes the position scan and the tokenizer disagree
// on a tag whose values the tokenizer decodes, by tokenizing one tag while
// scanning another of the same length, and checks that its links then go on
// the line of the tag instead of a wrong one.
func TestPositionFallback(t *testing.T) {
	tests := []struct {
		name, tokenized, scanned string
		want                     []Link
	}{
		{"keys differ",
			"<p>\n<a\nclass=x\nhref=/y&\nstyle='background:url(/b.png)'>",
			"<p>\n<a\nhref=/y&\nclass=x\nstyle='background:url(/b.png)'>",
			[]Link{pg("/y&", 2, "a", "href"), rs("/b.png", 2, "a", "style")}},
		{"tokenizer finds fewer attributes",
			"<p>\n<img\nsrc=\"/i&png\nsrcset=/b\">",
			"<p>\n<img\nsrc=/i&png\nsrcset=/bxx>",
			[]Link{rs("/i&png\nsrcset=/b", 2, "img", "src")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.tokenized) != len(tt.scanned) {
				t.Fatal("documents must be the same length")
			}
			const start = len("<p>\n")
			var s tagScanner
			name, attrs, end, ok := s.scan([]byte(tt.scanned), start+1, true)
			if !ok || end != len(tt.scanned) {
				t.Fatalf("scan: ok=%v end=%d", ok, end)
			}
			doc := []byte(tt.tokenized)
			e := extractor{doc: doc, lines: newLineCounter(doc)}
			tag := e.knownTag(doc[name.start:name.end])
			if e.decodedValues(tag, attrs, start, end) {
				t.Fatal("decodedValues trusts positions of attributes the tokenizer does not have")
			}
			e.emit(tag, e.lines.at(start), false)
			assertLinks(t, e.page.Links, tt.want)
		})
	}
}

func TestStylesheet(t *testing.T) {
	css := "/* url(/in-comment.png) */\n@import \"more.css\";\r\n@import url(print.css) print;\rbody {\n  background: url( ../img/bg.png );\n  content: \"url(/in-string.png)\";\n}\n.x{background-image:image-set(\"/set-1x.png\" 1x,\n  '/set-2x.png' 2x)}\n"
	want := []Link{
		{URL: "more.css", Line: 2, Tag: "css", Attr: "@import", Kind: KindStylesheet},
		{URL: "print.css", Line: 3, Tag: "css", Attr: "@import", Kind: KindStylesheet},
		{URL: "../img/bg.png", Line: 5, Tag: "css", Kind: KindResource},
		{URL: "/set-1x.png", Line: 8, Tag: "css", Kind: KindResource},
		{URL: "/set-2x.png", Line: 9, Tag: "css", Kind: KindResource},
	}
	assertLinks(t, Stylesheet([]byte(css)), want)
}

// Options.Links is only storage: Extract appends to it from its start, so a
// slice passed back with another page's links in it gives the same Page.
func TestExtractIntoLinks(t *testing.T) {
	t.Parallel()
	doc := realisticPage()
	want := Extract(doc, Options{IDs: true})
	buf := Extract([]byte(`<a href="x">x</a><img src="y"><a href="z">`), Options{}).Links
	buf = append(buf, make([]Link, 100)...)[:2]
	for range 2 {
		got := Extract(doc, Options{IDs: true, Links: buf})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Extract into a used slice: %d links, want %d; first differences: %v", len(got.Links), len(want.Links), firstDiff(got.Links, want.Links))
		}
		buf = got.Links
	}
}

func firstDiff(a, b []Link) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %+v != %+v", i, a[i], b[i])
		}
	}
	return "none in the common part"
}

// TestSrcdocIsADocumentOfItsOwn checks what of an <iframe srcdoc> is not
// the page's: its ids are not fragment targets of the page and its <base>
// does not move the page's links; its links count toward MaxLinks.
func TestSrcdocIsADocumentOfItsOwn(t *testing.T) {
	t.Parallel()
	doc := `<iframe srcdoc="<base href=/inner/><p id=inside><a href=x>"></iframe><h1 id=outside><a href=y>`
	p := Extract([]byte(doc), Options{IDs: true})
	if p.Base != "" {
		t.Errorf("Base = %q: a srcdoc's <base> is not the page's", p.Base)
	}
	if !slices.Equal(p.IDs, []string{"outside"}) {
		t.Errorf("IDs = %q, want only the page's own", p.IDs)
	}
	assertLinks(t, p.Links, []Link{pg("x", 1, "a", "href"), pg("y", 1, "a", "href")})

	p = Extract([]byte(`<a href=a><iframe srcdoc="<a href=b><a href=c><a href=d>"></iframe><a href=e>`), Options{MaxLinks: 2})
	if !p.More {
		t.Error("More = false: the srcdoc's links are past MaxLinks")
	}
	assertLinks(t, p.Links, []Link{pg("a", 1, "a", "href"), pg("b", 1, "a", "href")})
}
