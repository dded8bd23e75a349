package bench

import (
	"fmt"
	"math"
	"strings"
)

// bar is one system's figure in a chart panel.
type bar struct {
	label              string
	value, min, max    float64
	runs               int
	hinit, floor, none bool
}

// panel is one metric of a scenario, with its own scale.
type panel struct {
	title, unit string
	bars        []bar
}

// Chart geometry, in pixels.
const (
	chartW    = 760
	labelW    = 170
	barAreaW  = 440
	barH      = 16
	barGap    = 5
	panelHead = 26
	panelGap  = 14
	chartTop  = 40
)

// svgChart draws a horizontal bar chart: one panel per metric, a bar per
// system at its median, a whisker from min to max. Hand-written SVG: no
// plotting dependency.
func svgChart(title string, panels []panel) string {
	height := chartTop
	for _, p := range panels {
		height += panelHead + len(p.bars)*(barH+barGap) + panelGap
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartW, height, chartW, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", xmlEscape(title))
	y := chartTop
	for _, p := range panels {
		y = drawPanel(&b, p, y)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// drawPanel draws one panel from y and returns where the next one starts.
func drawPanel(b *strings.Builder, p panel, y int) int {
	fmt.Fprintf(b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+16, xmlEscape(p.title+" ("+p.unit+")"))
	y += panelHead
	scale := 0.0
	for _, br := range p.bars {
		scale = math.Max(scale, math.Max(br.value, br.max))
	}
	if scale <= 0 {
		scale = 1
	}
	px := func(v float64) float64 { return labelW + v/scale*barAreaW }
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", labelW, y-2, labelW, y+len(p.bars)*(barH+barGap))
	for _, br := range p.bars {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-6, y+barH-4, xmlEscape(br.label))
		if br.none {
			fmt.Fprintf(b, `<text x="%d" y="%d" fill="#888">no result</text>`+"\n", labelW+6, y+barH-4)
			y += barH + barGap
			continue
		}
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", labelW, y, px(br.value)-labelW, barH, barColor(br))
		if br.runs > 1 && br.max > br.min {
			mid := y + barH/2
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222"/>`+"\n", px(br.min), mid, px(br.max), mid)
			for _, v := range []float64{br.min, br.max} {
				fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222"/>`+"\n", px(v), mid-4, px(v), mid+4)
			}
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d">%s</text>`+"\n", math.Max(px(br.value), px(br.max))+6, y+barH-4, xmlEscape(fmtValue(br.value, p.unit)))
		y += barH + barGap
	}
	return y + panelGap
}

func barColor(br bar) string {
	switch {
	case br.hinit:
		return "#c0392b"
	case br.floor:
		return "#aaaaaa"
	}
	return "#4a78a8"
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// fmtValue prints a figure with as many digits as it deserves.
func fmtValue(v float64, unit string) string {
	if unit == "yes=1" {
		if v == 1 {
			return "yes"
		}
		return "no"
	}
	var s string
	switch a := math.Abs(v); {
	case v == math.Trunc(v) && a < 1e5:
		s = fmt.Sprintf("%.0f", v)
	case a >= 100:
		s = fmt.Sprintf("%.0f", v)
	case a >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	return s + " " + unit
}
