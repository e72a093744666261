package io.tally.bench.jobs;

import java.util.HashMap;
import java.util.Map;

/**
 * A benchmark tool's command line: at most one command word (anywhere) and `--key value`
 * options over the tool's defaults. An option the tool does not define is an error rather
 * than silently ignored, so a typo cannot run a benchmark against the wrong server.
 */
record BenchArgs(String command, Map<String, String> options) {
    static BenchArgs parse(String[] args, Map<String, String> defaults) {
        Map<String, String> o = new HashMap<>(defaults);
        String command = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--")) {
                String key = args[i].substring(2);
                if (!defaults.containsKey(key) || i + 1 >= args.length) {
                    throw new IllegalArgumentException(
                            "unknown option or missing value: " + args[i] + " (options: " + defaults.keySet() + ")");
                }
                o.put(key, args[++i]);
            } else if (command == null) {
                command = args[i];
            } else {
                throw new IllegalArgumentException("a second command: " + args[i]);
            }
        }
        return new BenchArgs(command, o);
    }
}
