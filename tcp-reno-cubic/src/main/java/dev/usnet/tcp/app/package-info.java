/**
 * Traffic applications that run inside namespaces on usnet's TCP, modelled on netperf's tests: {@link
 * dev.usnet.tcp.app.StreamApp} (TCP_STREAM: bulk sender and discarding sink), {@link dev.usnet.tcp.app.RrApp}
 * (TCP_RR: request/response with one transaction in flight, latency histogram) and {@link
 * dev.usnet.tcp.app.BurstApp} (MPI-like: send a burst, wait for the receiver's acknowledgement, compute, repeat;
 * burst completion histogram). Each end is an {@link dev.usnet.tcp.app.App} started on its namespace's thread;
 * each reports an {@link dev.usnet.tcp.app.AppResult} with throughput, operations, HdrHistogram percentiles and
 * the CPU time of its callbacks. They run the same in virtual time (deterministic given a seed) and real time.
 */
package dev.usnet.tcp.app;
