package io.tally.jobs.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job's arguments, parsed against its declared {@link JobSetting}s: an unknown argument or a
 * value of the wrong kind is an error naming it (not silently ignored), {@code --help} asks for
 * {@link #usage}. Every value is checked before the job graph is built.
 */
public final class JobArgs {
    private final String job;
    private final List<JobSetting> settings;
    private final Map<String, String> values = new LinkedHashMap<>();
    private boolean help;

    private JobArgs(String job, List<JobSetting> settings) {
        this.job = job;
        this.settings = settings;
    }

    /** @throws IllegalArgumentException naming the argument, with the usage appended */
    public static JobArgs parse(String job, List<JobSetting> settings, String[] args) {
        JobArgs a = new JobArgs(job, settings);
        Map<String, JobSetting> byName = new LinkedHashMap<>();
        for (JobSetting s : settings) {
            if (byName.put(s.name(), s) != null) {
                throw new IllegalStateException(job + " declares --" + s.name() + " twice");
            }
            a.values.put(s.name(), s.defaultValue());
        }
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                a.help = true;
                continue;
            }
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException(job + ": unexpected argument '" + arg + "'\n" + a.usage());
            }
            int eq = arg.indexOf('=');
            String name = eq > 0 ? arg.substring(2, eq) : arg.substring(2);
            JobSetting s = byName.get(name);
            if (s == null) {
                throw new IllegalArgumentException(job + ": unknown argument --" + name + "\n" + a.usage());
            }
            String value;
            if (eq > 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(job + ": --" + name + " needs a value\n" + a.usage());
            }
            s.check(value);
            a.values.put(name, value);
        }
        return a;
    }

    public boolean helpAsked() {
        return help;
    }

    public String usage() {
        StringBuilder sb = new StringBuilder(job + " arguments (--name value), default, description:\n");
        for (JobSetting s : settings) {
            sb.append(String.format("  --%-28s %-24s %s%n", s.name(), s.defaultValue(), s.description()));
        }
        return sb.toString();
    }

    public String text(JobSetting s) {
        String v = values.get(s.name());
        if (v == null) {
            throw new IllegalArgumentException(job + " does not declare --" + s.name());
        }
        return v;
    }

    /** A declared setting's value by its name; null when the job does not declare it. */
    public String byName(String name) {
        return values.get(name);
    }

    public long number(JobSetting s) {
        return Long.parseLong(text(s));
    }

    public int port(JobSetting s) {
        return Integer.parseInt(text(s));
    }

    public double ratio(JobSetting s) {
        return Double.parseDouble(text(s));
    }
}
