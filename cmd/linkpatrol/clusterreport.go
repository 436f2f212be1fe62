package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/linkpatrol/linkpatrol/report"
	"github.com/linkpatrol/linkpatrol/store"
)

// The merged database is held open by serve-frontier, whose coordinator
// writes every worker's results into it; check --nats and report --nats
// ask serve-frontier for the rendered report instead of opening the file.
// A report may be larger than a NATS message, so the bytes travel through
// an object store bucket and the reply names the object.
const (
	reportSubject = "lp.ctl.report"
	reportBucket  = "lp_reports"
)

type reportRequest struct {
	Pass           uint64           `json:"pass,omitempty"` // 0: the newest
	Format         string           `json:"format"`
	WrittenTo      string           `json:"written_to,omitempty"` // the -o file, for the HTML report's relative links
	All            bool             `json:"all,omitempty"`
	OnlyNew        bool             `json:"only_new,omitempty"`
	CheckFragments bool             `json:"check_fragments,omitempty"`
	ReportAfter    report.Threshold `json:"report_after"`
	FailOn         string           `json:"fail_on,omitempty"`
}

type reportReply struct {
	Object string `json:"object,omitempty"`
	Code   int    `json:"code"`
	Pass   uint64 `json:"pass"`
	Error  string `json:"error,omitempty"`
}

// serveReports answers report requests from db until ctx ends.
func serveReports(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, db *store.DB, log *slog.Logger) error {
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: reportBucket, TTL: time.Hour})
	if err != nil {
		return fmt.Errorf("report bucket: %w", err)
	}
	sub, err := nc.Subscribe(reportSubject, func(m *nats.Msg) {
		reply := renderForRequest(ctx, obs, db, m.Data)
		if reply.Error != "" {
			log.Warn("report request", "error", reply.Error)
		}
		b, _ := json.Marshal(reply)
		_ = m.Respond(b)
	})
	if err != nil {
		return fmt.Errorf("answer report requests: %w", err)
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return nil
}

func renderForRequest(ctx context.Context, obs jetstream.ObjectStore, db *store.DB, data []byte) reportReply {
	var req reportRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return reportReply{Error: "bad report request: " + err.Error()}
	}
	failOn, err := report.ParseFailOn(req.FailOn)
	if err != nil {
		return reportReply{Error: err.Error()}
	}
	last, ok, err := db.LastPass()
	if err != nil {
		return reportReply{Error: err.Error()}
	}
	if !ok {
		return reportReply{Error: fmt.Sprintf("%s holds no pass yet; begin one with check --nats", db.Path())}
	}
	id := last.ID
	if req.Pass != 0 && req.Pass != id {
		// As report says for one file: each URL keeps only its latest
		// result, so an older pass would render empty and clean.
		return reportReply{Error: fmt.Sprintf("cannot report pass %d: %s keeps each URL's latest result only, and pass %d (the newest) has replaced what pass %d found", req.Pass, db.Path(), id, req.Pass)}
	}
	rep, err := report.Build(db, id, report.Options{All: req.All, Now: time.Now(), ReportAfter: req.ReportAfter,
		OnlyNew: req.OnlyNew, CheckFragments: req.CheckFragments, FailOn: failOn})
	if err != nil {
		return reportReply{Error: err.Error(), Pass: id}
	}
	if last.State == store.PassComplete && last.Tally == nil {
		// Without it every missing fragment of a cluster pass was new
		// every night, and never fixed.
		if err := keepTally(db, last, rep); err != nil {
			return reportReply{Error: err.Error(), Pass: id}
		}
	}
	if req.WrittenTo != "" {
		rep = rep.WrittenTo(req.WrittenTo)
	}
	var b strings.Builder
	if err := report.Write(&b, rep, req.Format); err != nil {
		return reportReply{Error: err.Error(), Pass: id}
	}
	name := nuid.Next()
	if _, err := obs.PutString(ctx, name, b.String()); err != nil {
		return reportReply{Error: "store the report: " + err.Error(), Pass: id}
	}
	return reportReply{Object: name, Code: exitCode(verdictOf(rep)), Pass: id}
}

// fetchReport asks serve-frontier for a rendered report.
func fetchReport(ctx context.Context, js jetstream.JetStream, req reportRequest) ([]byte, reportReply, error) {
	data, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	m, err := js.Conn().RequestWithContext(ctx, reportSubject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, reportReply{}, errors.New("no serve-frontier answers on this NATS server (start linkpatrol serve-frontier --nats URL --db FILE)")
	}
	if err != nil {
		return nil, reportReply{}, fmt.Errorf("ask serve-frontier for the report: %w", err)
	}
	var reply reportReply
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		return nil, reportReply{}, fmt.Errorf("serve-frontier's report reply: %w", err)
	}
	if reply.Error != "" {
		return nil, reply, errors.New(reply.Error)
	}
	obs, err := js.ObjectStore(ctx, reportBucket)
	if err != nil {
		return nil, reply, fmt.Errorf("report bucket: %w", err)
	}
	b, err := obs.GetBytes(ctx, reply.Object)
	if err != nil {
		return nil, reply, fmt.Errorf("read the report: %w", err)
	}
	_ = obs.Delete(ctx, reply.Object)
	return b, reply, nil
}

// writeClusterReport prints the report to stdout in format (unless it is
// "") and writes each -o file, each rendered by serve-frontier, and returns
// what the report means for the exit code, as check and report do.
func writeClusterReport(ctx context.Context, js jetstream.JetStream, req reportRequest, stdout io.Writer, format string, outputs []string) error {
	files, err := parseOutputs(outputs)
	if err != nil {
		return err
	}
	code := exitOK
	for _, f := range files {
		r := req
		r.Format, r.WrittenTo = f.format, f.path
		b, reply, err := fetchReport(ctx, js, r)
		if err != nil {
			return err
		}
		code = reply.Code
		if err := writeAtomic(f.path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if format != "" || len(files) == 0 {
		r := req
		r.Format = format
		if r.Format == "" {
			r.Format = "text"
		}
		b, reply, err := fetchReport(ctx, js, r)
		if err != nil {
			return err
		}
		code = reply.Code
		if format != "" {
			if _, err := stdout.Write(b); err != nil {
				return fmt.Errorf("write report: %w", err)
			}
		}
	}
	switch code {
	case exitOK:
		return nil
	case exitProblems:
		return errProblems
	case exitStopped:
		return errUnfinished
	case exitNothing:
		return errNothingChecked
	case exitHeldBack:
		return errHeldBack
	}
	return fmt.Errorf("serve-frontier answered exit code %d", code)
}
