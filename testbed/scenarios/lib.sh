# Shell helpers for the guest-side scenario scripts (sourced).  The guest
# sees the host root read-only, so these run at their host paths.

# o2_list KEYS: reads o2ctl's YAML list output ("peer:", "conn:") on stdin
# and prints one line per entry: the values of the comma-separated KEYS
# joined by '|' (missing keys print empty).  Nested keys are flattened.
#   o2ctl conn show | o2_list 'local nid,peer,state'
o2_list() {
	awk -v keys="$1" '
	BEGIN { n = split(keys, K, ","); inrec = 0 }
	function flush(  s, i) {
		if (inrec) {
			s = ""
			for (i = 1; i <= n; i++) s = s (i > 1 ? "|" : "") V[K[i]]
			print s
		}
		split("", V); inrec = 0
	}
	{
		line = $0
		sub(/^[ \t]+/, "", line)
		if (line ~ /^- /) { flush(); inrec = 1; line = substr(line, 3) }
		p = index(line, ": ")
		if (p > 0 && inrec) {
			k = substr(line, 1, p - 1); v = substr(line, p + 2)
			gsub(/^"|"$/, "", v)
			V[k] = v
		}
	}
	END { flush() }'
}

# now: seconds since the epoch with ms
now() { date +%s.%3N; }
