//! The reports' charts: inline SVG with an explicit size and `viewBox` (drawn without
//! any script or stylesheet from elsewhere), each with a text alternative (`role="img"`,
//! `<title>` and `<desc>`) and followed by a `<table>` of the same figures, so that a
//! reader without the picture (a screen reader, a copy into a spreadsheet) has them all.

use super::html::{escape, table};

/// The drawing's size in SVG units (it scales down to the page's width).
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 260.0;
/// Room for the axes' labels.
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 40.0;
/// At most this many labels along the x axis (more overlap at the drawing's width).
const X_LABELS: usize = 24;

/// One bar: its label on the x axis, its height, and an interval drawn over it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
}

/// One line of a line chart: its name (the legend and the table's column) and its
/// points; a reference line is dashed.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub reference: bool,
}

/// What every chart says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Labels<'a> {
    /// The figure's id (unique in the page; its title and desc take `-title`, `-desc`).
    pub id: &'a str,
    pub title: &'a str,
    /// The text alternative: what the chart shows, in a sentence or two.
    pub description: &'a str,
    pub x: &'a str,
    pub y: &'a str,
}

/// A number as the charts and tables write it: whole numbers without decimals, others
/// with up to `decimals` (trailing zeros dropped).
pub fn number(v: f64, decimals: usize) -> String {
    let sign = if v < 0.0 { "−" } else { "" };
    let a = v.abs();
    if a.fract() == 0.0 && a < 1e15 {
        return format!("{sign}{}", crate::units::thousands(a as u128));
    }
    let text = format!("{a:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{sign}{text}")
}

/// A round step for an axis from 0 to `max` with about five gridlines.
fn step(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

fn open_svg(labels: &Labels<'_>) -> String {
    let id = escape(labels.id);
    format!(
        "<svg role=\"img\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" aria-labelledby=\"{id}-title {id}-desc\">\
         <title id=\"{id}-title\">{}</title><desc id=\"{id}-desc\">{}</desc>\n",
        escape(labels.title),
        escape(labels.description)
    )
}

/// The y axis from 0 to `top`: gridlines, their figures and the axis' name.
fn y_axis(top: f64, name: &str) -> String {
    let s = step(top);
    let plot = HEIGHT - TOP - BOTTOM;
    let mut out = String::new();
    let mut v = 0.0;
    while v <= top + s * 1e-9 {
        let y = HEIGHT - BOTTOM - v / top * plot;
        out.push_str(&format!(
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            WIDTH - RIGHT,
            LEFT - 4.0,
            y + 4.0,
            number(v, 3)
        ));
        v += s;
    }
    out.push_str(&format!(
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{}\"/>\
         <line class=\"axis\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{b}\" y2=\"{b}\"/>\
         <text x=\"12\" y=\"{:.1}\" transform=\"rotate(-90 12 {:.1})\" text-anchor=\"middle\">{}</text>\n",
        HEIGHT - BOTTOM,
        WIDTH - RIGHT,
        (TOP + HEIGHT - BOTTOM) / 2.0,
        (TOP + HEIGHT - BOTTOM) / 2.0,
        escape(name),
        b = HEIGHT - BOTTOM,
    ));
    out
}

/// The top of a y axis that holds `max`: a whole number of steps.
fn top_of(max: f64) -> f64 {
    let s = step(max);
    ((max / s).ceil() * s).max(s)
}

/// A bar chart (a bar per entry, its interval drawn over it) and its table.
pub fn bars(labels: &Labels<'_>, bars: &[Bar], decimals: usize) -> String {
    let max = bars
        .iter()
        .map(|b| b.interval.map_or(b.value, |(_, hi)| hi.max(b.value)))
        .fold(0.0f64, f64::max);
    let top = top_of(max);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / bars.len().max(1) as f64;
    let width = (slot * 0.8).max(0.5);
    let y_of = |v: f64| HEIGHT - BOTTOM - v / top * plot_h;
    let mut svg = open_svg(labels);
    svg.push_str(&y_axis(top, labels.y));
    let every = bars.len().div_ceil(X_LABELS).max(1);
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + i as f64 * slot + (slot - width) / 2.0;
        let y = y_of(b.value);
        svg.push_str(&format!(
            "<rect class=\"bar\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"{width:.2}\" height=\"{:.2}\"/>",
            (HEIGHT - BOTTOM - y).max(0.0)
        ));
        if let Some((lo, hi)) = b.interval {
            let cx = x + width / 2.0;
            let (y1, y2) = (y_of(lo), y_of(hi));
            let w = (width / 3.0).min(4.0);
            svg.push_str(&format!(
                "<line class=\"interval\" x1=\"{cx:.2}\" x2=\"{cx:.2}\" y1=\"{y1:.2}\" y2=\"{y2:.2}\"/>\
                 <line class=\"interval\" x1=\"{:.2}\" x2=\"{:.2}\" y1=\"{y2:.2}\" y2=\"{y2:.2}\"/>\
                 <line class=\"interval\" x1=\"{:.2}\" x2=\"{:.2}\" y1=\"{y1:.2}\" y2=\"{y1:.2}\"/>",
                cx - w,
                cx + w,
                cx - w,
                cx + w
            ));
        }
        if i % every == 0 {
            svg.push_str(&format!(
                "<text x=\"{:.2}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + width / 2.0,
                HEIGHT - BOTTOM + 14.0,
                escape(&b.label)
            ));
        }
        svg.push('\n');
    }
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n</svg>\n",
        LEFT + plot_w / 2.0,
        HEIGHT - 6.0,
        escape(labels.x)
    ));
    let with_intervals = bars.iter().any(|b| b.interval.is_some());
    let rows: Vec<Vec<String>> = bars
        .iter()
        .map(|b| {
            let mut row = vec![escape(&b.label), number(b.value, decimals)];
            if with_intervals {
                let (lo, hi) = b
                    .interval
                    .map_or((String::new(), String::new()), |(lo, hi)| {
                        (number(lo, decimals), number(hi, decimals))
                    });
                row.push(lo);
                row.push(hi);
            }
            row
        })
        .collect();
    let header: Vec<&str> = if with_intervals {
        vec![labels.x, labels.y, "lower", "upper"]
    } else {
        vec![labels.x, labels.y]
    };
    figure(labels, &svg, &table("", &header, &rows))
}

/// A line chart over a numeric x axis (a line per series, references dashed, a legend)
/// and its table: a row per x, a column per line.
pub fn lines(labels: &Labels<'_>, lines: &[Line], decimals: usize) -> String {
    let all = || lines.iter().flat_map(|l| l.points.iter());
    let (x_min, x_max) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(p.0), b.max(p.0))
    });
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else if x_min.is_finite() {
        (x_min - 0.5, x_min + 0.5)
    } else {
        (0.0, 1.0)
    };
    let y_max = all().map(|p| p.1).fold(0.0f64, f64::max);
    let top = top_of(y_max);
    let plot_w = WIDTH - LEFT - RIGHT - 150.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_of = |x: f64| LEFT + 8.0 + (x - x_min) / (x_max - x_min) * (plot_w - 16.0);
    let y_of = |y: f64| HEIGHT - BOTTOM - y / top * plot_h;
    let mut svg = open_svg(labels);
    svg.push_str(&y_axis(top, labels.y));
    let mut xs: Vec<f64> = all().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let every = xs.len().div_ceil(X_LABELS / 2).max(1);
    for (i, x) in xs.iter().enumerate() {
        if i % every == 0 {
            svg.push_str(&format!(
                "<text x=\"{:.2}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x_of(*x),
                HEIGHT - BOTTOM + 14.0,
                number(*x, 3)
            ));
        }
    }
    const COLOURS: [&str; 6] = [
        "#4a78b5", "#d08a2c", "#3b8f4a", "#8a4fb0", "#b5474a", "#333",
    ];
    for (i, line) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<String> = line
            .points
            .iter()
            .map(|&(x, y)| format!("{:.2},{:.2}", x_of(x), y_of(y)))
            .collect();
        let class = if line.reference { "ref" } else { "line" };
        svg.push_str(&format!(
            "<polyline class=\"{class}\" stroke=\"{colour}\" points=\"{}\"/>",
            points.join(" ")
        ));
        for &(x, y) in &line.points {
            svg.push_str(&format!(
                "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"3\" fill=\"{colour}\"/>",
                x_of(x),
                y_of(y)
            ));
        }
        let ly = TOP + 10.0 + i as f64 * 16.0;
        let lx = WIDTH - RIGHT - 140.0;
        svg.push_str(&format!(
            "<line class=\"{class}\" stroke=\"{colour}\" x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            lx + 18.0,
            lx + 22.0,
            ly + 4.0,
            escape(&line.name)
        ));
    }
    svg.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n</svg>\n",
        LEFT + plot_w / 2.0,
        HEIGHT - 6.0,
        escape(labels.x)
    ));
    let mut header = vec![labels.x];
    header.extend(lines.iter().map(|l| l.name.as_str()));
    let rows: Vec<Vec<String>> = xs
        .iter()
        .map(|&x| {
            let mut row = vec![number(x, 4)];
            for l in lines {
                row.push(
                    l.points
                        .iter()
                        .find(|p| p.0 == x)
                        .map_or(String::new(), |p| number(p.1, decimals)),
                );
            }
            row
        })
        .collect();
    figure(labels, &svg, &table("", &header, &rows))
}

/// The figure: the drawing, its caption (the title) and its table.
fn figure(labels: &Labels<'_>, svg: &str, table: &str) -> String {
    format!(
        "<figure id=\"{}\">\n{svg}<figcaption>{}</figcaption>\n{table}</figure>\n",
        escape(labels.id),
        escape(labels.title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Labels<'static> {
        Labels {
            id: "c",
            title: "T",
            description: "D",
            x: "size",
            y: "groups",
        }
    }

    #[test]
    fn a_bar_chart_has_a_size_a_text_alternative_and_its_table() {
        let out = bars(
            &labels(),
            &[
                Bar {
                    label: "0".into(),
                    value: 1200.0,
                    interval: Some((1190.0, 1210.0)),
                },
                Bar {
                    label: "1".into(),
                    value: 3.0,
                    interval: None,
                },
            ],
            0,
        );
        assert!(out.contains("width=\"720\" height=\"260\" viewBox=\"0 0 720 260\""));
        assert!(out.contains("role=\"img\""));
        assert!(out.contains("<title id=\"c-title\">T</title><desc id=\"c-desc\">D</desc>"));
        // The figures of the drawing are in the table too.
        assert!(
            out.contains("<td>1,200</td><td>1,190</td><td>1,210</td>"),
            "{out}"
        );
        assert!(out.contains("<td>3</td><td></td><td></td>"), "{out}");
    }

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(step(14_223.0), 5000.0);
        assert_eq!(step(9.0), 2.0);
        assert_eq!(step(0.0), 1.0);
        assert_eq!(top_of(14_223.0), 15_000.0);
    }

    #[test]
    fn numbers_drop_trailing_zeros() {
        assert_eq!(number(2.5, 2), "2.5");
        assert_eq!(number(2.0, 2), "2");
        assert_eq!(number(0.21434, 4), "0.2143");
        assert_eq!(number(-3.0, 0), "−3");
    }
}
