package crawler

// WithMaxLinks is cfg with the links read of a page set to n instead of
// maxPageLinks (100,000): the cut is the same code at any size, and a page
// of 100,000 links costs a second of CPU under -race.
func WithMaxLinks(cfg Config, n int) Config {
	cfg.maxLinks = n
	return cfg
}
