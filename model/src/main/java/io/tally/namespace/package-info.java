/**
 * The namespace configuration contract (docs/design.md): parsing with field-named errors,
 * safe names, the slice planner, the counter fold. Part of the model module, under its original
 * package name on purpose: NamespaceChange lives in the jobs' broadcast state, and Flink's
 * savepoints name state classes, so a rename would stop today's savepoints from restoring.
 */
package io.tally.namespace;
