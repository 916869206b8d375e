//! The figures as they are gathered (per-repetition values in report
//! order) and their summary into the report's rows.

use crate::report::Row;
use crate::stats::Summary;

/// One figure's per-repetition values, in report order.
pub(super) struct Figure {
    pub test: &'static str,
    pub size: Option<usize>,
    pub unit: &'static str,
    pub path: Option<String>,
    pub ours: Vec<f64>,
    /// fi_pingpong values of the same repetitions (NaN where it failed).
    pub raw: Vec<f64>,
    pub raw_what: Option<&'static str>,
    /// Open MPI's OFI MTL's values of the same repetitions (tagged
    /// figures of the conduit only; NaN where it failed).
    pub mtl: Vec<f64>,
}

#[derive(Default)]
pub(super) struct Figures(pub Vec<Figure>);

impl Figures {
    pub fn get(
        &mut self,
        test: &'static str,
        size: Option<usize>,
        unit: &'static str,
    ) -> &mut Figure {
        let i = match self.0.iter().position(|f| f.test == test && f.size == size) {
            Some(i) => i,
            None => {
                self.0.push(Figure {
                    test,
                    size,
                    unit,
                    path: None,
                    ours: Vec::new(),
                    raw: Vec::new(),
                    raw_what: None,
                    mtl: Vec::new(),
                });
                self.0.len() - 1
            }
        };
        &mut self.0[i]
    }

    /// The report's rows: every figure with at least one value of ours.
    pub fn rows(&self) -> Vec<Row> {
        self.0.iter().filter_map(Figure::row).collect()
    }
}

/// A reference's summary, when every repetition of ours has a (finite)
/// value of it.
fn reference(ours: &[f64], other: &[f64]) -> Option<Summary> {
    if other.len() == ours.len() {
        Summary::of(other)
    } else {
        None
    }
}

/// The median of ours / other per repetition (repetitions where the other
/// has no positive value left out).
fn paired(ours: &[f64], other: &[f64]) -> Option<f64> {
    let r: Vec<f64> = ours
        .iter()
        .zip(other)
        .filter(|(_, w)| **w > 0.0)
        .map(|(o, w)| o / w)
        .collect();
    Summary::of(&r).map(|s| s.median)
}

impl Figure {
    fn row(&self) -> Option<Row> {
        let ours = Summary::of(&self.ours)?;
        // Raw figures count only when every repetition has one.
        let raw = reference(&self.ours, &self.raw);
        let mtl = reference(&self.ours, &self.mtl);
        let ratio =
            |r: Option<Summary>| r.filter(|r| r.median > 0.0).map(|r| ours.median / r.median);
        Some(Row {
            test: self.test.into(),
            size: self.size,
            unit: self.unit.into(),
            path: self.path.clone(),
            ours,
            raw,
            raw_what: raw.and(self.raw_what.map(String::from)),
            ratio: ratio(raw),
            paired_ratio: raw.and_then(|_| paired(&self.ours, &self.raw)),
            ours_reps: self.ours.clone(),
            raw_reps: self.raw.clone(),
            mtl,
            mtl_ratio: ratio(mtl),
            mtl_paired_ratio: mtl.and_then(|_| paired(&self.ours, &self.mtl)),
            mtl_reps: self.mtl.clone(),
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn references_need_every_repetition() {
        let mut f = Figures::default();
        let g = f.get("tagged_lat", Some(8), "us");
        g.ours = vec![2.0, 4.0, 3.0];
        g.raw = vec![1.0, 2.0, 1.0];
        g.raw_what = Some("fi_pingpong");
        g.mtl = vec![4.0, f64::NAN, 6.0];
        let h = f.get("mtl_lat", Some(8), "us");
        h.ours = vec![5.0];
        f.get("tagged_bw", Some(8), "MB/s");
        let rows = f.rows();
        assert_eq!(rows.len(), 2, "a figure without values has no row");
        let r = &rows[0];
        assert_eq!(r.raw.map(|s| s.median), Some(1.0));
        assert_eq!(r.ratio, Some(3.0));
        assert_eq!(r.paired_ratio, Some(2.0));
        // One repetition of the MTL failed: no summary, and no ratio.
        assert_eq!(r.mtl, None);
        assert_eq!(r.mtl_ratio, None);
        assert_eq!(r.mtl_paired_ratio, None);
        assert_eq!(r.mtl_reps.len(), 3);
        assert_eq!((rows[1].raw, rows[1].raw_what.as_deref()), (None, None));
    }
}
