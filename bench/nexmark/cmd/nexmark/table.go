package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluice-sql/sluice/bench/nexmark"
)

func pickSystems(list string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(strings.ToLower(name))
		if name == "" {
			continue
		}
		found := false
		for _, s := range allSystems {
			if s == name {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown system %q (sluice, kstreams, flink)", name)
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--systems names no system")
	}
	return out, nil
}

// printRow prints one result as it comes.
func printRow(r row) {
	if r.Error != "" {
		fmt.Printf("%-5s %-8s %10d  error: %s\n", r.Query, r.System, r.Events, r.Error)
		return
	}
	mark := ""
	if r.ChecksumsMatch != nil && !*r.ChecksumsMatch {
		mark = "  MISMATCH with sluice"
	}
	fmt.Printf("%-5s %-8s %10d %14.0f %14.0f %9.0fM %10d  %.12s%s\n", r.Query, r.System, r.Events, r.EventsPerCPU, r.EventsPerWall, float64(r.PeakRSSBytes)/(1<<20), r.ResultRows, r.Checksum, mark)
}

// printTable prints the side-by-side table as Markdown: per query and
// system events per CPU-second, events per wall-second, peak RSS and
// whether the checksum matches Sluice's, then Sluice's ratios to each peer.
func printTable(w io.Writer, rows []row, queries []nexmark.Query, systems []string, events int64, xmx string) {
	at := map[[2]string]row{}
	for _, r := range rows {
		at[[2]string{r.Query, r.System}] = r
	}
	fmt.Fprintf(w, "%d events per query; peers' JVM heap -Xmx%s. Cells: events/cpu-s · events/wall-s over the whole run · the same between 20 %% and 90 %% of the input consumed (steady state; – where the run is too short to sample) · peak RSS MiB · checksum vs Sluice's.\n\n", events, xmx)
	fmt.Fprint(w, "| query |")
	for _, s := range systems {
		fmt.Fprintf(w, " %s |", s)
	}
	var peers []string
	for _, s := range systems {
		if s != systemSluice {
			peers = append(peers, s)
		}
	}
	hasSluice := len(peers) < len(systems)
	if hasSluice {
		for _, p := range peers {
			fmt.Fprintf(w, " cpu sluice/%s | steady cpu sluice/%s | RSS %s/sluice |", abbrev(p), abbrev(p), abbrev(p))
		}
	}
	fmt.Fprint(w, "\n|---|")
	for range systems {
		fmt.Fprint(w, "---|")
	}
	if hasSluice {
		for range peers {
			fmt.Fprint(w, "---:|---:|---:|")
		}
	}
	fmt.Fprintln(w)
	for _, q := range queries {
		fmt.Fprintf(w, "| %s |", q.Name)
		for _, s := range systems {
			fmt.Fprintf(w, " %s |", cell(at[[2]string{q.Name, s}]))
		}
		if hasSluice {
			ref := at[[2]string{q.Name, systemSluice}]
			for _, p := range peers {
				r := at[[2]string{q.Name, p}]
				if ref.Error != "" || r.Error != "" || r.EventsPerCPU == 0 || ref.PeakRSSBytes == 0 {
					fmt.Fprint(w, " – | – | – |")
					continue
				}
				steadyRatio := "–"
				if ref.SteadyEventsPerCPU > 0 && r.SteadyEventsPerCPU > 0 {
					steadyRatio = fmt.Sprintf("%.2fx", ref.SteadyEventsPerCPU/r.SteadyEventsPerCPU)
				}
				fmt.Fprintf(w, " %.2fx | %s | %.2fx |", ref.EventsPerCPU/r.EventsPerCPU, steadyRatio, float64(r.PeakRSSBytes)/float64(ref.PeakRSSBytes))
			}
		}
		fmt.Fprintln(w)
	}
}

func abbrev(system string) string {
	switch system {
	case systemKStreams:
		return "KS"
	case systemFlink:
		return "Flink"
	}
	return system
}

func cell(r row) string {
	if r.Query == "" {
		return "–"
	}
	if r.Error != "" {
		msg := r.Error
		if len(msg) > 60 {
			msg = msg[:60] + "…"
		}
		return "error: " + strings.ReplaceAll(msg, "|", "/")
	}
	check := ""
	if r.ChecksumsMatch != nil {
		check = " · ok"
		if !*r.ChecksumsMatch {
			check = " · **differs**"
		}
	}
	steadyCell := "– · –"
	if r.SteadyEventsPerCPU > 0 {
		steadyCell = fmt.Sprintf("%.0f · %.0f", r.SteadyEventsPerCPU, r.SteadyEventsPerWall)
	}
	return fmt.Sprintf("%.0f · %.0f · %s · %.0f%s", r.EventsPerCPU, r.EventsPerWall, steadyCell, float64(r.PeakRSSBytes)/(1<<20), check)
}
