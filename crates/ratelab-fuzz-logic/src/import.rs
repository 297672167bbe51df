//! The checks of fuzz target `import`: any bytes through `ratelab::import::Importer`, fed in chunks whose
//! sizes come from the input, with a format and a filter that come from the input too. Nothing
//! panics; the result equals `import::parse` of the whole input with the same options (the
//! split never matters); the times are sorted; the line counts add up; an error is one line.
//!
//! Input layout: a format byte, a filter byte (field, or none) with a value, up to seven chunk
//! sizes, a repeat byte (mostly 1 copy of the data, else 2 to 95, up to 192 KiB, so that small
//! inputs cross the 64 KiB line and sniffing limits too), then the data.
use arbitrary::Unstructured;
use ratelab::import::{
    self, Counts, Filter, Format, ImportOptions, Imported, Importer, FIELDS, FORMATS,
};
use ratelab::Error;

struct Case {
    options: ImportOptions,
    sizes: Vec<usize>,
    data: Vec<u8>,
}

fn case(input: &[u8]) -> arbitrary::Result<Case> {
    let mut u = Unstructured::new(input);
    let format = FORMATS[usize::from(u.arbitrary::<u8>()?) % FORMATS.len()];
    let filter_byte: u8 = u.arbitrary()?;
    let filter = if filter_byte < 128 {
        None
    } else {
        let len = usize::from(u.arbitrary::<u8>()? % 32);
        let value = String::from_utf8_lossy(u.bytes(len.min(u.len()))?).into_owned();
        Some(Filter {
            field: FIELDS[usize::from(filter_byte) % FIELDS.len()],
            value,
        })
    };
    let count = usize::from(u.arbitrary::<u8>()? % 8);
    let mut sizes = Vec::with_capacity(count);
    for _ in 0..count {
        // Mostly small chunks, sometimes large ones: the low bit picks the scale.
        let s: u16 = u.arbitrary()?;
        sizes.push(if s & 1 == 0 {
            usize::from(s >> 1) % 64
        } else {
            usize::from(s >> 1) * 4
        });
    }
    if sizes.iter().all(|&s| s == 0) {
        // Empty feeds are fine, but something has to move the input along.
        sizes.push(1);
    }
    let repeat = match u.arbitrary::<u8>()? {
        0..=223 => 1,
        r => 2 + 3 * usize::from(r - 224),
    };
    let rest = u.take_rest();
    // Three times 64 KiB is past every limit; more would only slow the run down.
    let data = rest.repeat(repeat.min(3 * 65_536 / rest.len().max(1)).max(1));
    Ok(Case {
        options: ImportOptions { format, filter },
        sizes,
        data,
    })
}

/// Checks one input; panics on a broken law. Returns whether the input was long enough to
/// make a case (the rest are ignored, as under libFuzzer).
pub fn check(input: &[u8]) -> bool {
    let Ok(Case {
        options,
        sizes,
        data,
    }) = case(input)
    else {
        return false;
    };
    let whole = import::parse(&data, options.clone());

    let mut importer = Importer::new(options.clone());
    let mut rest = &data[..];
    let mut failed: Option<Error> = None;
    let mut i = 0;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(sizes[i % sizes.len()].min(rest.len()));
        if let Err(e) = importer.feed(chunk) {
            // An error ends the import: every later call returns it again.
            assert_eq!(importer.feed(b"1700000000\n").as_ref(), Err(&e));
            failed = Some(e);
            break;
        }
        rest = tail;
        i += 1;
    }
    let chunked = importer.finish();
    if let Some(e) = &failed {
        assert_eq!(chunked.as_ref(), Err(e), "finish returns the feed's error");
    }
    assert_eq!(chunked, whole, "chunks {sizes:?} of {} bytes", data.len());

    match &whole {
        Ok(imported) => laws(imported, &options, &data),
        Err(e) => {
            let message = e.to_string();
            assert!(!message.contains(['\n', '\r']), "{message:?}");
            assert!(message.chars().count() < 1_000, "{message:?}");
        }
    }
    true
}

fn laws(imported: &Imported, options: &ImportOptions, data: &[u8]) {
    let Imported {
        times,
        format,
        counts:
            Counts {
                lines,
                blank,
                filtered_out,
                malformed,
                first_malformed,
                reordered: _,
            },
    } = imported;
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "times are sorted");
    assert!(!times.is_empty(), "an import with no time is an error");
    assert_ne!(
        *format,
        Format::Auto,
        "a successful import has decided its format"
    );
    if options.format != Format::Auto {
        assert_eq!(*format, options.format);
    }
    if options.filter.is_some() {
        assert_eq!(*format, Format::AccessLog, "filters are for access logs");
    } else {
        assert_eq!(*filtered_out, 0);
    }
    assert_eq!(
        *lines,
        times.len() as u64 + blank + filtered_out + malformed,
        "every line is a time, blank, filtered out or malformed"
    );
    // A line ends at each `\n`, and the file's last one may have none.
    let newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    let unterminated = data.last().is_some_and(|&b| b != b'\n');
    assert_eq!(*lines, newlines + u64::from(unterminated));
    assert_eq!(first_malformed.len() as u64, (*malformed).min(5));
    let mut previous = 0;
    for bad in first_malformed {
        assert!(bad.line > previous && bad.line <= *lines, "{bad:?}");
        assert!(bad.text.chars().count() <= 120, "{bad:?}");
        previous = bad.line;
    }
}
