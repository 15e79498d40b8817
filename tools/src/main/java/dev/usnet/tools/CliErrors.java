package dev.usnet.tools;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The command line's own mistakes in usnet's words, naming the command and the option: the argument parser's messages
 * ({@code '5x' is not a double}, {@code Unmatched argument at index 0: 'x'}) speak of Java types and argument
 * indexes, which a user of {@code usnet run} never sees.
 */
final class CliErrors {
    private CliErrors() {}

    /** One line, starting with the command: {@code usnet run: --duration takes a number (like 2 or 0.5), got '5x'}. */
    static String describe(CommandLine.ParameterException ex) {
        String cmd = ex.getCommandLine().getCommandSpec().qualifiedName();
        if (ex instanceof CommandLine.UnmatchedArgumentException u) {
            List<String> args = u.getUnmatched();
            String first = args.isEmpty() ? "" : args.getFirst();
            List<String> subcommands = List.copyOf(ex.getCommandLine().getSubcommands().keySet());
            String what;
            if (first.startsWith("-")) {
                what = "unknown option '" + first + "'";
            } else if (!subcommands.isEmpty() && ex.getCommandLine().getCommandSpec().positionalParameters().isEmpty()) {
                what = "unknown command '" + first + "' (commands: " + String.join(", ", subcommands) + ")";
            } else {
                what = "unexpected argument" + (args.size() == 1 ? " '" + first + "'" : "s " + String.join(" ", args.stream()
                        .map(x -> "'" + x + "'").toList())) + " (this command takes no more)";
            }
            List<String> near = u.getSuggestions();
            return cmd + ": " + what + (near.isEmpty() ? "" : "; did you mean " + String.join(" or ", near) + "?");
        }
        ArgSpec arg = ex.getArgSpec();
        if (arg != null && ex.getValue() != null && ex.getCause() instanceof CommandLine.TypeConversionException) {
            return cmd + ": " + name(arg) + " takes " + expected(arg.type()) + ", got '" + ex.getValue() + "'";
        }
        return cmd + ": " + ex.getMessage();
    }

    private static String name(ArgSpec arg) {
        return arg instanceof OptionSpec o ? o.longestName() : arg.paramLabel();
    }

    private static String expected(Class<?> type) {
        if (type == Double.class || type == double.class || type == Float.class || type == float.class) {
            return "a number (like 2 or 0.5)";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class
                || type == Short.class || type == short.class) {
            return "a whole number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type.isEnum()) {
            return "one of " + String.join(", ", java.util.Arrays.stream(type.getEnumConstants()).map(Object::toString).toList());
        }
        if (type == java.nio.file.Path.class) {
            return "a path";
        }
        return "a " + type.getSimpleName();
    }
}
