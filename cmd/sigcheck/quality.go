package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/sigcheck/sigcheck/internal/plot"
	"github.com/sigcheck/sigcheck/sig"
)

func runQuality(e *env, args []string) error {
	fs := flags(e, "quality", "Reproduces Table 1 of Langou et al.: for each algebra, the percentage of\n"+
		"collisions (signatures whose value an earlier one already had) and of duplicates\n"+
		"(values shared by several signatures, among the distinct values) on a panel of\n"+
		fmt.Sprintf("%d distinct type signatures over MPI-1's 13 basic C types, beside what a random\n", len(sig.Panel()))+
		"mapping to as many bits would give. The panel: every sequence of 1 to 3 elements,\n"+
		"uniform runs of 4 to 64, two-run structs t1×a, t2×b (a, b ≤ 5) and alternations\n"+
		"(t1, t2)×2..4 (see sig.Panel).\n\n"+
		fmt.Sprintf("The paper's panel has no signature longer than 64 elements, so each algebra is also\n"+
			"measured on %d signatures of 256 to 10^6 elements (runs, two-run structs, alternations,\n"+
			"a run with one odd element, nested vectors; see sig.LongPanel), and the paper's figure is\n"+
			"printed beside: \"misses\" marks an algebra that does worse than 1.25× the paper's figure\n"+
			"and 1.5× a random mapping.", len(sig.LongPanel())))
	asJSON := fs.Bool("json", false, "print one JSON object per algebra")
	algs := fs.String("algs", "", "comma-separated `specs` to measure (default: the paper's set at 16 and 32 bits)")
	img := fs.String("plot", "", "also write a bar chart of the collisions to this `file`: .svg, .png or .pdf, as its name ends")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	var imgFormat string
	if *img != "" {
		f, err := plot.Format(*img)
		if err != nil {
			return usageErrorf("-plot %v", err)
		}
		imgFormat = f
	}
	specs := sig.QualitySpecs
	if *algs != "" {
		specs = splitSpecs(*algs)
	}
	var algebras []sig.Algebra
	for _, s := range specs {
		a, err := sig.ParseAlgebra(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		algebras = append(algebras, a)
	}
	panel, long := sig.Panel(), sig.LongPanel()
	var qs, ls []sig.Quality
	for _, a := range algebras {
		qs = append(qs, sig.MeasureQuality(a, panel))
		ls = append(ls, sig.MeasureQuality(a, long))
	}
	if *img != "" {
		var bars []plot.Bar
		for i, q := range qs {
			bars = append(bars, plot.Bar{Label: fmt.Sprintf("%s (%d bits)", q.Algebra, q.Bits), Value: q.Collisions, Ref: q.Expected})
			bars = append(bars, plot.Bar{Label: fmt.Sprintf("%s, 256–10^6 elements", q.Algebra), Value: ls[i].Collisions, Ref: ls[i].Expected})
		}
		var b bytes.Buffer
		err := plot.Bars(&b, imgFormat, fmt.Sprintf("Collisions on %d type signatures of 1–64 elements and %d of 256–10^6", len(panel), len(long)),
			"%", "random mapping", bars)
		if err == nil {
			err = os.WriteFile(*img, b.Bytes(), 0o666)
		}
		if err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		for i, q := range qs {
			l := ls[i]
			row := map[string]any{
				"algebra": q.Algebra, "bits": q.Bits, "signatures": q.Signatures,
				"collisions_pct": round(q.Collisions), "duplicates_pct": round(q.Duplicates),
				"expected_pct": round(q.Expected), "expected_duplicates_pct": round(q.ExpectedDuplicates),
				"long_signatures": l.Signatures, "long_collisions_pct": round(l.Collisions),
				"long_duplicates_pct": round(l.Duplicates), "long_expected_pct": round(l.Expected),
			}
			if p, ok := sig.PaperCollisions[q.Algebra]; ok {
				meets, _ := sig.MeetsPaper(q)
				meetsLong, _ := sig.MeetsPaper(l)
				row["paper_collisions_pct"], row["meets_paper"], row["long_meets_paper"] = p, meets, meetsLong
			}
			if err := enc.Encode(row); err != nil {
				return err
			}
		}
		return nil
	}
	rows := [][]string{{"algebra", "bits", "collisions", "duplicates", "random", "vs random", "paper", "long: collisions", "random", "vs random", "beside the paper"}}
	for i, q := range qs {
		l := ls[i]
		paper, note := "", ""
		if p, ok := sig.PaperCollisions[q.Algebra]; ok {
			paper = pct(p)
			meets, _ := sig.MeetsPaper(q)
			meetsLong, _ := sig.MeetsPaper(l)
			switch {
			case !meets && !meetsLong:
				note = "misses it"
			case !meetsLong:
				note = "misses it on long signatures"
			case !meets:
				note = "misses it on the short panel"
			default:
				note = "as published"
			}
		}
		rows = append(rows, []string{q.Algebra, fmt.Sprint(q.Bits), pct(q.Collisions), pct(q.Duplicates), pct(q.Expected), ratio(q),
			paper, pct(l.Collisions), pct(l.Expected), ratio(l), note})
	}
	table(e.stdout, rows, map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true})
	fmt.Fprintf(e.stdout, "\n%d type signatures of 1 to 64 elements (the paper's kind of panel; its figures are for 6994 of them),\n"+
		"and %d of 256 to 10^6 elements (long). Collisions and duplicates compare Sig.Value only, as the paper does.\n",
		len(panel), len(long))
	return nil
}

// ratio is how many times a random mapping's collisions q has, "none" for none.
func ratio(q sig.Quality) string {
	switch r := q.Collisions / q.Expected; {
	case q.Collisions == 0:
		return "none"
	case r < 10:
		return fmt.Sprintf("%.2f×", r)
	case r < 1000:
		return fmt.Sprintf("%.0f×", r)
	default:
		return "> 1000×" // at 32 bits and more random collides almost never
	}
}

func pct(v float64) string { return fmt.Sprintf("%.2f %%", v) }

func round(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// splitSpecs splits a comma-separated list of algebra specs, which contain
// commas themselves: "gfd:w=8,m=2,crc32c" is gfd:w=8,m=2 and crc32c.
func splitSpecs(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		p := strings.TrimSpace(part)
		if k, _, ok := strings.Cut(p, "="); ok && len(out) > 0 && !strings.Contains(k, ":") {
			out[len(out)-1] += "," + p // a parameter of the previous spec
			continue
		}
		out = append(out, p)
	}
	return out
}
