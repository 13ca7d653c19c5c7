"""Saved iostat outputs read back as reports: sysstat ``iostat -x`` and ``sar -d`` text of
every generation, OSWatcher and ExaWatcher archives (plain, gzip, bzip2, zip, tar).

Pure and streaming: every module reads lines and yields reports and problems one at a time,
so an archive of any size is read in bounded memory and in one pass per file.

- report: HistoryReport (one report, racperf's column set) and Problem (file, line, what);
- columns: a file's column set (sysstat 7.x to 12.x) converted to racperf's;
- timestamps: the dates and times these files carry (banner, ``-t``, ``zzz`` markers);
- sysstat_text: the line-by-line reader of iostat text, with or without snapshot markers;
- sar_disk: the reader of ``sar -d`` text;
- archive: paths (files, directories, .gz .bz2 .zip .tar[.gz]) opened as named line streams;
- reader: read_history, every path's reports in time order per host.
"""
