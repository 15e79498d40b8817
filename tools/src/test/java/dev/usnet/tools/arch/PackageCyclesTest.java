package dev.usnet.tools.arch;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

class PackageCyclesTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.usnet.tools");

    private static final SliceAssignment EACH_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            return c.getPackageName().startsWith("dev.usnet.tools") ? SliceIdentifier.of(c.getPackageName()) : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "each package of tools";
        }
    };

    @Test
    void noPackageCycleInTools() {
        slices().assignedFrom(EACH_PACKAGE).should().beFreeOfCycles().check(MAIN);
    }
}
