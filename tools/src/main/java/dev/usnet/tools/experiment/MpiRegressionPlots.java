package dev.usnet.tools.experiment;

import dev.usnet.tools.compare.ComparePlots;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** The charts of {@code usnet experiment mpi-regression}: completion and RTOs per variant and mode, cwnd at loss. */
final class MpiRegressionPlots {
    static {
        System.setProperty("java.awt.headless", "true");
    }

    private MpiRegressionPlots() {}

    /** completion.png, rtos.png and cwnd-at-loss.png into {@code dir}; returns the files written. */
    static List<Path> write(Path dir, List<MpiRegression.Row> rows) throws IOException {
        List<String> variants = rows.stream().map(MpiRegression.Row::variant).toList();
        List<String> modes = List.of(MpiRegression.NATIVE, MpiRegression.NETNS);
        double[][] completion = new double[modes.size()][variants.size()];
        double[][] rtos = new double[modes.size()][variants.size()];
        for (int m = 0; m < modes.size(); m++) {
            for (int v = 0; v < rows.size(); v++) {
                MpiRegression.Cell c = MpiRegression.cell(rows.get(v), modes.get(m));
                completion[m][v] = c == null ? Double.NaN : c.completionS();
                rtos[m][v] = c == null ? Double.NaN : MpiRegression.value(c, MpiRegression.RTOS);
            }
        }
        List<Path> out = new ArrayList<>();
        Path p = dir.resolve("completion.png");
        ComparePlots.writeBars(p, "MPI job completion per variant and mode", "completion (s)", variants, modes, completion);
        out.add(p);
        p = dir.resolve("rtos.png");
        ComparePlots.writeBars(p, "Retransmission timeouts (TCPTimeouts + TCPSackFailures + TCPLossFailures, all namespaces)", "RTOs", variants,
                modes, rtos);
        out.add(p);
        p = dir.resolve("cwnd-at-loss.png");
        if (writeCwndAtLoss(p, rows)) {
            out.add(p);
        }
        return out;
    }

    /**
     * The distribution over all connections of snd_cwnd when a loss was detected (entering recovery or an RTO),
     * one cumulative curve per variant and mode; false (nothing written) when no run lost anything.
     */
    private static boolean writeCwndAtLoss(Path png, List<MpiRegression.Row> rows) throws IOException {
        XYSeriesCollection all = new XYSeriesCollection();
        for (MpiRegression.Row r : rows) {
            for (String mode : List.of(MpiRegression.NATIVE, MpiRegression.NETNS)) {
                MpiRegression.Cell c = MpiRegression.cell(r, mode);
                if (c == null || c.cwndAtLoss().isEmpty()) {
                    continue;
                }
                long total = c.cwndAtLoss().values().stream().mapToLong(Long::longValue).sum();
                XYSeries s = new XYSeries(r.variant() + " " + mode + " (n=" + total + ")");
                long acc = 0;
                for (Map.Entry<Long, Long> e : c.cwndAtLoss().entrySet()) {
                    s.add(Math.max(1, e.getKey()), (double) acc / total);
                    acc += e.getValue();
                    s.add(Math.max(1, e.getKey()), (double) acc / total);
                }
                all.addSeries(s);
            }
        }
        if (all.getSeriesCount() == 0) {
            return false;
        }
        JFreeChart chart = ChartFactory.createXYLineChart("snd_cwnd at each loss (entering recovery or RTO), all connections",
                "snd_cwnd (packets)", "fraction of losses at or below", all, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        LogAxis x = new LogAxis("snd_cwnd (packets)");
        x.setBase(2);
        plot.setDomainAxis(x);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1200, 700);
        return true;
    }
}
