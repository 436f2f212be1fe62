// Package store owns the linkpatrol database: one bbolt file holding the
// passes, the latest record of every URL, the links of every parsed page, the
// frontier of the open pass and the per-host state that must survive a
// restart. No other package imports bbolt.
package store
