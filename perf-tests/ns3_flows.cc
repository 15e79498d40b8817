// The ns-3 counterpart of perf-tests/virtual-flows-routed.yaml: N bulk CUBIC flows through one routed bottleneck,
// timed, so that ns-3's wall-clock cost per bottleneck frame can be set beside usnet's as the flows multiply.
//
//   client 0 .. client N-1 ── each its own point-to-point link (10 Gbit/s, 50 us) ── router
//   router ── 1 Gbit/s, 500 us, DropTail queue of 1000 packets on the router's device ── server
//
// Addresses as in the YAML: client i's /30 is 198.18.0.0 + 4(i+1), the router .1 of it and the client .2 (so
// 198.18.x.y of the YAML's 4i+5 and 4i+6); the bottleneck link is 198.19.0.0/30, router .1, server .2. Client i
// runs a BulkSend to the server's port 5001+i from i*spread/N seconds; the server runs one PacketSink per port.
//
// TCP as usnet's (and as the bulk anchor's): ns3::TcpCubic with HyStart, PRR recovery, MSS 1448 (MTU 1500 with
// timestamps), SACK, timestamps and window scaling on, initial cwnd 10, delayed ACK every 2 segments, MinRto 200 ms,
// send buffer 4 MiB and receive buffer 6 MiB (Linux's tcp_wmem/tcp_rmem maxima; ns-3 does not autotune). The
// traffic-control layer's queue discs are removed from every device, so each device's DropTail queue is the only
// queue on the path (point-to-point devices carry a 2-byte PPP header; they need no ARP).
//
// Routing: --routing=global (the default) fills every node's table from ns-3's global route manager: each node
// then holds a route to every other node's /30, N routes on every client and on the server. --routing=static
// gives the clients and the server a default route to the router, as the YAML does, and leaves the router its
// connected routes: the tables of a real network of this shape.
//
// What is counted: the router's bottleneck device, "PhyTxEnd" (a frame completely serialized onto the 1 Gbit/s
// wire: the data) plus "PhyRxEnd" (a frame completely received from it: the server's ACKs). Frames the queue or
// the traffic-control layer dropped are never serialized, so they are not in those counts (they are in drops=).
// That is usnet's sw/srv rx + tx count (a frame is counted as sent when it leaves the device's link emulation).
//
// Output: one line of key=value (the keys are below, in main); the times are steady_clock around
// Simulator::Run(), and from the event at --steadyFrom simulated seconds to the end of the run.
//
// Build (Debian's pkg-config for ns-3 is broken, so the libraries by name):
//   g++ -O2 -std=c++17 -o ns3_flows perf-tests/ns3_flows.cc -lns3-core -lns3-network -lns3-internet \
//       -lns3-point-to-point -lns3-applications -lns3-traffic-control -lns3-bridge -lns3-stats
// Run: ./ns3_flows --n=1000 [--sim=5] [--spread=1] [--steadyFrom=2] [--routing=global|static] [--progress=1]
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

using namespace ns3;

namespace
{
using Clock = std::chrono::steady_clock;

// The router's bottleneck device, as the trace sinks below see it.
struct BottleneckCounts
{
    uint64_t txFrames = 0; // PhyTxEnd: data frames serialized toward the server
    uint64_t rxFrames = 0; // PhyRxEnd: frames (ACKs) received from the server
    uint64_t queueDrops = 0; // dropped by the device's DropTail queue
    uint64_t tcDrops = 0; // dropped by the traffic-control layer while the device queue was stopped (full)
};

BottleneckCounts bottleneck;

// What the event at --steadyFrom recorded: the start of the steady-state window.
struct SteadyMark
{
    bool taken = false;
    Clock::time_point wall;
    double cpuSeconds = 0;
    uint64_t frames = 0;
};

SteadyMark steady;

double
ProcessCpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void
CountTx(Ptr<const Packet>)
{
    bottleneck.txFrames++;
}

void
CountRx(Ptr<const Packet>)
{
    bottleneck.rxFrames++;
}

void
CountQueueDrop(Ptr<const Packet>)
{
    bottleneck.queueDrops++;
}

void
CountTcDrop(Ptr<const Packet>)
{
    bottleneck.tcDrops++;
}

void
MarkSteadyStart()
{
    steady.taken = true;
    steady.wall = Clock::now();
    steady.cpuSeconds = ProcessCpuSeconds();
    steady.frames = bottleneck.txFrames + bottleneck.rxFrames;
}

// Connects a trace source or stops with its name: a renamed source must not silently count nothing.
// A line on stderr every --progress simulated seconds, so that a run too long to wait for still says how far it got.
void
ReportProgress(double interval, Clock::time_point start)
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::fprintf(stderr,
                 "progress: sim %.3f s, wall %.1f s, bottleneck frames %llu, max RSS %ld KiB\n",
                 Simulator::Now().GetSeconds(),
                 std::chrono::duration<double>(Clock::now() - start).count(),
                 (unsigned long long)(bottleneck.txFrames + bottleneck.rxFrames),
                 usage.ru_maxrss);
    Simulator::Schedule(Seconds(interval), &ReportProgress, interval, start);
}

template <typename Sink>
void
Connect(Ptr<Object> object, const std::string& source, Sink sink)
{
    NS_ABORT_MSG_UNLESS(object->TraceConnectWithoutContext(source, MakeCallback(sink)),
                        "trace source not found: " << source);
}
} // namespace

int
main(int argc, char* argv[])
{
    uint32_t n = 1;
    double sim = 5.0;
    double spread = 1.0;
    double steadyFrom = 2.0;
    std::string routing = "global";
    std::string accessRate = "10Gbps";
    std::string accessDelay = "50us";
    std::string rate = "1Gbps";
    std::string delay = "500us";
    uint32_t queue = 1000;
    double progress = 0;

    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "client nodes, one bulk flow each", n);
    cmd.AddValue("sim", "simulated seconds", sim);
    cmd.AddValue("spread", "the clients' starts are spread evenly over this many seconds", spread);
    cmd.AddValue("steadyFrom", "the steady-state window runs from this simulated second to the end", steadyFrom);
    cmd.AddValue("routing", "global (ns-3's global route manager) or static (default routes, as the YAML)", routing);
    cmd.AddValue("accessRate", "rate of each client's link to the router", accessRate);
    cmd.AddValue("accessDelay", "one-way delay of each client's link", accessDelay);
    cmd.AddValue("rate", "rate of the bottleneck link router-server", rate);
    cmd.AddValue("delay", "one-way delay of the bottleneck link", delay);
    cmd.AddValue("queue", "DropTail queue of every device, packets", queue);
    cmd.AddValue("progress", "a progress line on stderr every this many simulated seconds (0: none)", progress);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_UNLESS(n >= 1 && n <= 16383, "--n=" << n << ": between 1 and 16383 (the /30s of 198.18.0.0/16)");
    NS_ABORT_MSG_UNLESS(sim > 0, "--sim=" << sim << ": must be positive");
    NS_ABORT_MSG_UNLESS(spread >= 0 && spread <= sim, "--spread=" << spread << ": must be in [0, --sim]");
    NS_ABORT_MSG_UNLESS(steadyFrom >= 0 && steadyFrom < sim,
                        "--steadyFrom=" << steadyFrom << ": must be in [0, --sim)");
    NS_ABORT_MSG_UNLESS(progress >= 0, "--progress=" << progress << ": must not be negative");
    NS_ABORT_MSG_UNLESS(routing == "global" || routing == "static",
                        "--routing=" << routing << ": global or static");

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(6 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));

    Clock::time_point buildStart = Clock::now();

    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> server = CreateObject<Node>();
    NodeContainer clients;
    clients.Create(n);
    NodeContainer all(router, server);
    all.Add(clients);

    InternetStackHelper internet;
    if (routing == "static")
    {
        Ipv4StaticRoutingHelper staticOnly;
        internet.SetRoutingHelper(staticOnly);
    }
    internet.Install(all);

    PointToPointHelper link;
    link.SetDeviceAttribute("Mtu", UintegerValue(1500));
    link.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue)));
    TrafficControlHelper trafficControl;

    // The bottleneck: the router's end (device 0) is the one whose queue fills.
    link.SetDeviceAttribute("DataRate", StringValue(rate));
    link.SetChannelAttribute("Delay", StringValue(delay));
    NetDeviceContainer bottleneckDevs = link.Install(router, server);
    Ipv4AddressHelper addresses;
    addresses.SetBase("198.19.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bottleneckIfs = addresses.Assign(bottleneckDevs);
    // Assign() gives each device ns-3's default root queue disc; without it the DropTail queue is the only queue.
    trafficControl.Uninstall(bottleneckDevs);
    Ipv4Address serverAddress = bottleneckIfs.GetAddress(1);

    link.SetDeviceAttribute("DataRate", StringValue(accessRate));
    link.SetChannelAttribute("Delay", StringValue(accessDelay));
    addresses.SetBase("198.18.0.4", "255.255.255.252");
    Ipv4StaticRoutingHelper staticRouting;
    for (uint32_t i = 0; i < n; i++)
    {
        NetDeviceContainer devs = link.Install(router, clients.Get(i));
        Ipv4InterfaceContainer ifs = addresses.Assign(devs);
        addresses.NewNetwork();
        trafficControl.Uninstall(devs);
        if (routing == "static")
        {
            Ptr<Ipv4> ipv4 = clients.Get(i)->GetObject<Ipv4>();
            staticRouting.GetStaticRouting(ipv4)->SetDefaultRoute(ifs.GetAddress(0), ifs.Get(1).second);
        }
    }
    if (routing == "static")
    {
        Ptr<Ipv4> ipv4 = server->GetObject<Ipv4>();
        staticRouting.GetStaticRouting(ipv4)->SetDefaultRoute(bottleneckIfs.GetAddress(0),
                                                              bottleneckIfs.Get(1).second);
    }
    else
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }

    ApplicationContainer senders;
    ApplicationContainer sinks;
    for (uint32_t i = 0; i < n; i++)
    {
        uint16_t port = 5001 + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sinks.Add(sink.Install(server));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(serverAddress, port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(65536)); // usnet's stream app writes 64 KiB at a time
        ApplicationContainer app = bulk.Install(clients.Get(i));
        app.Start(Seconds(i * spread / n));
        app.Stop(Seconds(sim));
        senders.Add(app);
    }
    sinks.Start(Seconds(0));
    sinks.Stop(Seconds(sim));

    Ptr<NetDevice> routerPort = bottleneckDevs.Get(0);
    Connect(routerPort, "PhyTxEnd", &CountTx);
    Connect(routerPort, "PhyRxEnd", &CountRx);
    Connect(DynamicCast<PointToPointNetDevice>(routerPort)->GetQueue(), "Drop", &CountQueueDrop);
    Connect(router->GetObject<TrafficControlLayer>(), "TcDrop", &CountTcDrop);

    Simulator::Schedule(Seconds(steadyFrom), &MarkSteadyStart);
    Simulator::Stop(Seconds(sim));
    double buildSeconds = std::chrono::duration<double>(Clock::now() - buildStart).count();

    double cpu0 = ProcessCpuSeconds();
    Clock::time_point t0 = Clock::now();
    if (progress > 0)
    {
        Simulator::Schedule(Seconds(progress), &ReportProgress, progress, t0);
    }
    Simulator::Run();
    Clock::time_point t1 = Clock::now();
    double cpu1 = ProcessCpuSeconds();
    NS_ABORT_MSG_UNLESS(steady.taken, "the run ended before the steady-state mark at " << steadyFrom << " s");

    uint64_t rxBytes = 0;
    uint32_t flowsWithoutData = 0;
    for (uint32_t i = 0; i < sinks.GetN(); i++)
    {
        uint64_t got = DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
        rxBytes += got;
        flowsWithoutData += got == 0;
    }
    uint64_t events = Simulator::GetEventCount();

    double wall = std::chrono::duration<double>(t1 - t0).count();
    double steadyWall = std::chrono::duration<double>(t1 - steady.wall).count();
    double steadyCpu = cpu1 - steady.cpuSeconds;
    uint64_t frames = bottleneck.txFrames + bottleneck.rxFrames;
    uint64_t steadyFrames = frames - steady.frames;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);

    std::printf("sim=ns3 n=%u routing=%s sim_s=%.3f build_s=%.3f wall_run_s=%.4f cpu_run_s=%.4f events=%llu "
                "bottleneck_tx=%llu bottleneck_rx=%llu bottleneck_frames=%llu us_per_frame=%.3f "
                "steady_from_s=%.3f steady_wall_s=%.4f steady_frames=%llu steady_wall_us_per_frame=%.3f "
                "steady_cpu_us_per_frame=%.3f queue_drops=%llu tc_drops=%llu goodput_mbps=%.3f rx_bytes=%llu "
                "flows_without_data=%u max_rss_kb=%ld\n",
                n,
                routing.c_str(),
                sim,
                buildSeconds,
                wall,
                cpu1 - cpu0,
                (unsigned long long)events,
                (unsigned long long)bottleneck.txFrames,
                (unsigned long long)bottleneck.rxFrames,
                (unsigned long long)frames,
                frames ? wall * 1e6 / frames : 0.0,
                steadyFrom,
                steadyWall,
                (unsigned long long)steadyFrames,
                steadyFrames ? steadyWall * 1e6 / steadyFrames : 0.0,
                steadyFrames ? steadyCpu * 1e6 / steadyFrames : 0.0,
                (unsigned long long)bottleneck.queueDrops,
                (unsigned long long)bottleneck.tcDrops,
                rxBytes * 8.0 / sim / 1e6,
                (unsigned long long)rxBytes,
                flowsWithoutData,
                usage.ru_maxrss);
    Simulator::Destroy();
    return 0;
}
