// Package javatime formats and parses date-times with the pattern language
// of java.time.format.DateTimeFormatter (and the compatible subset of
// java.text.SimpleDateFormat), as ksqlDB's date and time functions and the
// TIMESTAMP_FORMAT property use it.
//
// Supported pattern letters:
//
//	G era (AD)            y year-of-era          u year
//	Q/q quarter           M/L month (1, 01, Jan, January, J)
//	D day-of-year         d day-of-month         E day-of-week (Mon, Monday)
//	a AM/PM               H hour 0-23            k hour 1-24
//	K hour 0-11           h hour 1-12            m minute
//	s second              S fraction of second   n nano-of-second
//	A milli-of-day        N nano-of-day          VV zone ID
//	z zone name (PST, Pacific Standard Time)     O localized offset (GMT+8)
//	X offset, Z for zero  x offset               Z offset (+0000)
//
// Text in single quotes is literal (two quotes in a row stand for one),
// [ ] encloses an optional section, and any other character that is not a
// letter stands for itself. Text is English; parsing ignores case. Zones come from the
// tz database embedded in the binary.
//
// Parse compiles a pattern once; the Format it returns is safe for
// concurrent use. Cached compiles patterns known only at run time.
package javatime
